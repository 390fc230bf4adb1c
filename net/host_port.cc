#include "net/host_port.h"

#include <cctype>
#include <initializer_list>

namespace clickatron::net {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Concatenates parts. (operator+ chains on std::string trip GCC 12's -Wrestrict false
// positive at -O3.)
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

bool IsHostName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  }
  return s.front() != '-' && s.front() != '.';
}

}  // namespace

std::string HostPort::ToString() const { return host + ":" + std::to_string(port); }

bool IsIpv4Literal(std::string_view text) {
  int parts = 0;
  while (true) {
    size_t digits = 0;
    unsigned value = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      value = value * 10 + (text[digits] - '0');
      if (++digits > 3) return false;
    }
    if (digits == 0 || value > 255) return false;
    if (digits > 1 && text[0] == '0') return false;  // "010" reads as octal to inet_aton
    ++parts;
    text.remove_prefix(digits);
    if (text.empty()) return parts == 4;
    if (text[0] != '.' || parts == 4) return false;
    text.remove_prefix(1);
  }
}

Status ParseHostPort(std::string_view text, HostPort* out) {
  std::string_view s = Trim(text);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) {
    return Status::Error(Cat({"'", text, "' is not host:port"}));
  }
  std::string_view host = s.substr(0, colon);
  std::string_view port_text = s.substr(colon + 1);
  bool all_digits = !host.empty();
  for (char c : host) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') all_digits = false;
  }
  if (all_digits ? !IsIpv4Literal(host) : !IsHostName(host)) {
    return Status::Error(Cat({"'", host, "' in '", text, "' is not an IPv4 address or host name"}));
  }
  unsigned long port = 0;
  for (char c : port_text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || port > 65535) {
      return Status::Error(
          Cat({"port '", port_text, "' in '", text, "' is not a number 1..65535"}));
    }
    port = port * 10 + (c - '0');
  }
  if (port == 0 || port > 65535) {
    return Status::Error(Cat({"port '", port_text, "' in '", text, "' is out of range 1..65535"}));
  }
  out->host = std::string(host);
  out->port = static_cast<uint16_t>(port);
  return Status::OK();
}

Status ParseHostPortList(std::string_view text, std::vector<HostPort>* out) {
  const std::string_view full = text;
  std::vector<HostPort> result;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    if (Trim(item).empty()) {
      return Status::Error(Cat({"empty address in list '", full, "'"}));
    }
    HostPort hp;
    Status s = ParseHostPort(item, &hp);
    if (!s.ok()) return s;
    result.push_back(std::move(hp));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  *out = std::move(result);
  return Status::OK();
}

}  // namespace clickatron::net
