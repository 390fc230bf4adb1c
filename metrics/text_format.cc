#include "metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace clickatron::metrics {

void AppendValue(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);  // shortest round trip
    out->append(buf, ec == std::errc() ? end : buf);
  }
}

void AppendLabelValue(std::string_view value, std::string* out) {
  for (char c : value) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void AppendHelp(std::string_view help, std::string* out) {
  for (char c : help) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

namespace {

// name{a="x",b="y"[,le="..."]} — the braces only when there is a label.
void AppendSeries(std::string_view name, std::string_view suffix, const Labels& labels, const std::string* le,
                  std::string* out) {
  out->append(name);
  out->append(suffix);
  if (labels.empty() && le == nullptr) return;
  out->push_back('{');
  bool first = true;
  auto label = [&](std::string_view n, std::string_view v) {
    if (!first) out->push_back(',');
    first = false;
    out->append(n);
    out->append("=\"");
    AppendLabelValue(v, out);
    out->push_back('"');
  };
  for (const Label& l : labels) label(l.name, l.value);
  if (le != nullptr) label("le", *le);
  out->push_back('}');
}

void AppendLine(std::string_view name, std::string_view suffix, const Labels& labels, const std::string* le,
                double value, std::string* out) {
  AppendSeries(name, suffix, labels, le, out);
  out->push_back(' ');
  AppendValue(value, out);
  out->push_back('\n');
}

void AppendHistogram(const Family& f, const Sample& s, std::string* out) {
  std::string le;
  for (size_t i = 0; i < s.cumulative.size(); i++) {
    le.clear();
    if (i + 1 == s.cumulative.size()) {
      le = "+Inf";
    } else {
      AppendValue(double(HistogramBound(int(i))) / s.units_per_second, &le);
    }
    AppendLine(f.name, "_bucket", s.labels, &le, double(s.cumulative[i]), out);
  }
  AppendLine(f.name, "_sum", s.labels, nullptr, s.value, out);
  AppendLine(f.name, "_count", s.labels, nullptr, double(s.cumulative.back()), out);
}

}  // namespace

void WriteText(const Registry& registry, std::string* out) {
  for (const Family& f : registry.families()) {
    out->append("# HELP ");
    out->append(f.name);
    out->push_back(' ');
    AppendHelp(f.help, out);
    out->append("\n# TYPE ");
    out->append(f.name);
    out->push_back(' ');
    out->append(TypeName(f.type));
    out->push_back('\n');
    for (const Sample& s : f.samples) {
      if (f.type == Type::kHistogram) {
        AppendHistogram(f, s, out);
      } else {
        AppendLine(f.name, "", s.labels, nullptr, s.value, out);
      }
    }
  }
  for (const std::string& problem : registry.problems()) {
    out->append("# problem: ");
    AppendHelp(problem, out);
    out->push_back('\n');
  }
}

}  // namespace clickatron::metrics
