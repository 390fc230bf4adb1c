#include "keyformat/records.h"

#include <charconv>

#include "base/clip.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

Status KeyError(std::string_view key, const std::string& why) {
  return Status::Error("key '" + Clipped(key, 200) + "' " + why);
}

// Splits "{subns}.{ns}" or "{ns}" (the part before '|'); validates the names.
Status ParseNamespaces(std::string_view key, std::string_view head, ParsedKey* out) {
  const size_t dot = head.find('.');
  if (dot == std::string_view::npos) {
    out->ns = head;
  } else {
    out->subns = head.substr(0, dot);
    out->ns = head.substr(dot + 1);
    Status s = ValidateNamespace(out->subns, "subtotal namespace");
    if (!s.ok()) return KeyError(key, "is malformed: " + s.message());
  }
  Status s = ValidateNamespace(out->ns);
  if (!s.ok()) return KeyError(key, "is malformed: " + s.message());
  return Status::OK();
}

Status CheckYmdh(std::string_view key, std::string_view token, int64_t* hour) {
  Result<int64_t> t = DecodeYmdh(token);
  if (!t.ok()) return KeyError(key, "is malformed: " + t.status().message());
  *hour = *t;
  return Status::OK();
}

Result<ParsedKey> ParseLookupKey(std::string_view key) {
  ParsedKey p;
  p.type = RecordType::kLookup;
  p.hash = key.substr(kLookupPrefix.size());
  p.shard_key = key;
  if (!IsKeyHash(p.hash)) return KeyError(key, "is malformed: '" + std::string(p.hash) + "' is not a key hash");
  return p;
}

// The end of the run of literal-key bytes that starts at key[from], and whether that run
// is a stored key (IsLiteralKey or IsKeyHash: a hash's bytes are literal-key bytes too).
size_t StoredKeyEnd(std::string_view key, size_t from, bool* stored) {
  const size_t end = LiteralKeyEnd(key, from);
  const size_t size = end - from;
  *stored = (size >= 1 && size <= kMaxLiteralKeySize) || (size == kHashSize && IsKeyHash(key.substr(from, size)));
  return end;
}

// Shared head of both key grammars: namespaces, then the stored key up to the next '.'.
// Sets the rest after that '.' (or empty with *has_rest=false); false, without a reason,
// when the head is malformed. One pass over `{ns}|{key}` or `{subns}.{ns}|{key}`: each
// part ends at the first byte its class does not allow, which must be the separator that
// follows it (any other byte there would make the part invalid anyway).
bool SplitHead(std::string_view key, ParsedKey* p, std::string_view* rest, bool* has_rest) {
  const size_t first_end = NamespaceEnd(key, 0);
  if (first_end == 0 || first_end > kMaxNamespaceSize || first_end >= key.size()) return false;
  size_t bar;
  if (key[first_end] == '|') {
    bar = first_end;
    p->ns = key.substr(0, first_end);
    p->subns = {};
  } else if (key[first_end] == '.') {
    const size_t ns_end = NamespaceEnd(key, first_end + 1);
    const size_t ns_size = ns_end - first_end - 1;
    if (ns_size == 0 || ns_size > kMaxNamespaceSize || ns_end >= key.size() || key[ns_end] != '|') return false;
    bar = ns_end;
    p->subns = key.substr(0, first_end);
    p->ns = key.substr(first_end + 1, ns_size);
  } else {
    return false;
  }
  bool stored;
  const size_t key_end = StoredKeyEnd(key, bar + 1, &stored);
  if (!stored) return false;
  if (key_end < key.size() && key[key_end] != '.') return false;  // a byte no stored key has
  p->key = key.substr(bar + 1, key_end - bar - 1);
  *has_rest = key_end < key.size();
  *rest = *has_rest ? key.substr(key_end + 1) : std::string_view();
  const size_t shard_begin = p->subns.empty() ? 0 : p->subns.size() + 1;
  p->shard_key = key.substr(shard_begin, key_end - shard_begin);
  return true;
}

// SplitHead with the reason when the head is malformed.
Status ParseHead(std::string_view key, ParsedKey* p, std::string_view* rest, bool* has_rest) {
  if (SplitHead(key, p, rest, has_rest)) return Status::OK();
  const size_t bar = key.find('|');
  if (bar == std::string_view::npos) return KeyError(key, "is malformed: it has no '|'");
  ParsedKey names;
  if (Status s = ParseNamespaces(key, key.substr(0, bar), &names); !s.ok()) return s;
  return KeyError(key, "is malformed: '" + std::string(p->key) + "' is not a stored key");
}

// Parses a lookup key whole; any other key's head with ParseHead, then calls
// tail(&p, rest, has_rest) for what follows "{key}", which realtime and archive keys lay out
// differently. A template so each parser's tail stays inlined.
template <typename Tail>
Result<ParsedKey> ParseKey(std::string_view key, Tail tail) {
  if (key.starts_with(kLookupPrefix)) return ParseLookupKey(key);
  ParsedKey p;
  std::string_view rest;
  bool has_rest;
  Status s = ParseHead(key, &p, &rest, &has_rest);
  if (!s.ok()) return s;
  s = tail(&p, rest, has_rest);
  if (!s.ok()) return s;
  return p;
}

}  // namespace

bool IsStoredKey(std::string_view stored) { return IsLiteralKey(stored) || IsKeyHash(stored); }

// The realtime grammar; every check is a plain predicate, so a valid key (nearly every key
// an import or a write reads) costs no Status or Result (a fifth of an import's
// instructions went to them). ParseRealtimeKey below walks the same checks again only to
// say why a key failed.
bool ParseRealtimeKeyQuietly(std::string_view key, ParsedKey* p) {
  // Each field is set on each path, without zeroing the whole struct first: that was a
  // `rep stos` of 128 bytes a key, a quarter of the importer's own time.
  if (key.starts_with(kLookupPrefix)) {
    p->type = RecordType::kLookup;
    p->hash = key.substr(kLookupPrefix.size());
    p->shard_key = key;
    p->ns = p->key = p->subns = p->subkey = p->ymdh = {};
    p->hour = 0;
    return IsKeyHash(p->hash);
  }
  p->hash = {};
  std::string_view rest;
  bool has_rest;
  if (!SplitHead(key, p, &rest, &has_rest) || !has_rest) return false;
  if (p->subns.empty()) {
    p->type = RecordType::kTotal;
    p->ymdh = rest;
    p->subkey = {};
  } else {
    p->type = RecordType::kSubtotal;
    bool stored;
    const size_t dot = StoredKeyEnd(rest, 0, &stored);
    if (!stored || dot == rest.size() || rest[dot] != '.') return false;
    p->subkey = rest.substr(0, dot);
    p->ymdh = rest.substr(dot + 1);
  }
  return DecodeYmdhQuietly(p->ymdh, &p->hour);
}

Result<ParsedKey> ParseRealtimeKey(std::string_view key) {
  if (ParsedKey p; ParseRealtimeKeyQuietly(key, &p)) return p;
  Result<ParsedKey> why = ParseKey(key, [key](ParsedKey* p, std::string_view rest, bool has_rest) {
    if (!has_rest) return KeyError(key, "is malformed: it has no time token");
    if (p->subns.empty()) {
      p->type = RecordType::kTotal;
      p->ymdh = rest;
    } else {
      p->type = RecordType::kSubtotal;
      const size_t dot = rest.find('.');
      if (dot == std::string_view::npos) return KeyError(key, "is malformed: a subtotal key needs '.{subkey}.{ymdh}'");
      p->subkey = rest.substr(0, dot);
      p->ymdh = rest.substr(dot + 1);
      if (!IsStoredKey(p->subkey)) return KeyError(key, "is malformed: '" + std::string(p->subkey) + "' is not a stored subkey");
    }
    return CheckYmdh(key, p->ymdh, &p->hour);
  });
  if (why.ok()) return KeyError(key, "is malformed");  // unreachable: one grammar, two walks
  return why;
}

Result<ParsedKey> ParseArchiveKey(std::string_view key) {
  return ParseKey(key, [key](ParsedKey* p, std::string_view rest, bool has_rest) {
    if (p->subns.empty()) {
      p->type = RecordType::kTotal;
      if (has_rest) return KeyError(key, "is malformed: an archive total key has no time token");
      return Status::OK();
    }
    p->type = RecordType::kSubtotal;
    if (!has_rest) return KeyError(key, "is malformed: an archive subtotal key needs '.{ymdh}'");
    p->ymdh = rest;
    return CheckYmdh(key, p->ymdh, &p->hour);
  });
}

void AppendTotalKey(std::string* out, std::string_view ns, std::string_view key, std::string_view ymdh) {
  out->append(ns).push_back('|');
  out->append(key).push_back('.');
  out->append(ymdh);
}

void AppendSubtotalKey(std::string* out, std::string_view subns, std::string_view ns,
                       std::string_view key, std::string_view subkey, std::string_view ymdh) {
  out->append(subns).push_back('.');
  out->append(ns).push_back('|');
  out->append(key).push_back('.');
  out->append(subkey).push_back('.');
  out->append(ymdh);
}

void AppendLookupKey(std::string* out, std::string_view hash) {
  out->append(kLookupPrefix);
  out->append(hash);
}

void AppendArchiveTotalKey(std::string* out, std::string_view ns, std::string_view key) {
  out->append(ns).push_back('|');
  out->append(key);
}

void AppendArchiveSubtotalKey(std::string* out, std::string_view subns, std::string_view ns,
                              std::string_view key, std::string_view ymdh) {
  out->append(subns).push_back('.');
  out->append(ns).push_back('|');
  out->append(key).push_back('.');
  out->append(ymdh);
}

Result<Line> SplitLine(std::string_view line, char separator) {
  const size_t sep = line.find(separator);
  if (sep == std::string_view::npos) {
    return Status::Error("line '" + Clipped(line, 200) + "' has no '" +
                         std::string(1, separator) + "' separator");
  }
  if (sep == 0) return Status::Error("line '" + Clipped(line, 200) + "' has an empty key");
  return Line{line.substr(0, sep), line.substr(sep + 1)};
}

bool ParseCountQuietly(std::string_view text, int64_t* n) {
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '9') {  // most counts of an increment
    *n = text[0] - '0';
    return true;
  }
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *n);
  return !text.empty() && ec == std::errc() && ptr == end;
}

Result<int64_t> ParseCount(std::string_view text) {
  int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    return Status::Error("count '" + Clipped(text, 40) + "' is not an integer");
  }
  if (ec == std::errc::result_out_of_range) {
    return Status::Error("count '" + Clipped(text, 40) + "' does not fit in 64 bits");
  }
  return n;
}

Result<Int128> ParseWideCount(std::string_view text) {
  Int128 n = 0;
  if (ParseInt128(text, &n)) return n;
  const std::string_view digits = text.substr(text.starts_with('-') ? 1 : 0);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Status::Error("count '" + Clipped(text, 40) + "' is not an integer");
  }
  return Status::Error("count '" + Clipped(text, 40) + "' does not fit in 128 bits");
}

void AppendCount(std::string* out, int64_t n) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, n);
  (void)ec;
  out->append(buf, ptr);
}

void AppendEscapedLookupValue(std::string* out, std::string_view original) {
  for (char c : original) {
    switch (c) {
      case '%': out->append("%25"); break;
      case '\n': out->append("%0A"); break;
      case '\r': out->append("%0D"); break;
      case '\0': out->append("%00"); break;
      default: out->push_back(c);
    }
  }
}

Result<std::string> UnescapeLookupValue(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); i++) {
    const char c = escaped[i];
    if (c == '\n' || c == '\r' || c == '\0') {
      return Status::Error("lookup value has an unescaped control byte at offset " + std::to_string(i));
    }
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    const std::string_view code = escaped.substr(i + 1, 2);
    if (code == "25") out.push_back('%');
    else if (code == "0A") out.push_back('\n');
    else if (code == "0D") out.push_back('\r');
    else if (code == "00") out.push_back('\0');
    else return Status::Error("lookup value has a bad escape '%" + std::string(code) + "' at offset " + std::to_string(i));
    i += 2;
  }
  return out;
}

}  // namespace clickatron
