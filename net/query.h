// Query strings: percent-decoding into ordered (name, value) pairs, and encoding for clients.
//
// A Query parses "a=1&key=x%2By&key=z" into the pairs (a,1) (key,x+y) (key,z): order kept,
// repeated names kept (sortdb's /mget treats every parameter whose name starts with 'k'
// as a key, so handlers need the whole list). A name without '=' has an empty value; empty
// segments ("a=1&&b=2") are skipped.
//
// Decoding rules, chosen for sortdb and bitly-API clients:
//   * "%XX" (two hex digits, either case) is the byte 0xXX; "%00" is a NUL byte, kept.
//   * '+' is a space, in names and values. evhttp_parse_query_str does the same (it calls
//     evhttp_decode_uri, which always decodes '+'), and sortdb used evhttp's parser, so
//     existing clients already send a literal '+' as "%2B". Clickatron keys and hashes
//     contain '+', '/', '=' and '|': clients must percent-encode them (PercentEncode does).
//   * A '%' not followed by two hex digits is an error, not a literal '%' (evhttp keeps it
//     literally, which silently turns a client's encoding bug into a wrong key). The error
//     names the parameter: "bad percent-encoding in query parameter 'key'", and
//     bad_param() returns "key" so an API handler can answer 400 INVALID_ARG_KEY.
//
// Views returned by a Query point into the Query's own buffer and stay valid until the
// next Parse() or the Query's destruction. A Query reused for many parses allocates only
// when a query is longer than every earlier one. Not thread-safe.
#ifndef CLICKATRON_NET_QUERY_H_
#define CLICKATRON_NET_QUERY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace clickatron::net {

struct QueryParam {
  std::string_view name;
  std::string_view value;
};

class Query {
 public:
  Query() = default;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  // Parses raw (the text after '?', without the '?'). On error status() is not ok,
  // params() holds the parameters decoded before the bad one, and bad_param() names the
  // offending parameter (its raw, undecoded name).
  Status Parse(std::string_view raw);

  // The result of the last Parse().
  const Status& status() const { return status_; }
  std::string_view bad_param() const { return bad_param_; }

  // Every parameter in request order.
  const std::vector<QueryParam>& params() const { return params_; }

  // The value of the first parameter called name, or nullopt if there is none.
  std::optional<std::string_view> Get(std::string_view name) const;

  // How many parameters are called name.
  size_t Count(std::string_view name) const;

  // Forgets the last parse, keeping the buffers' capacity.
  void Clear();

 private:
  std::string buffer_;  // decoded bytes; reserved before decoding so views never move
  std::vector<QueryParam> params_;
  Status status_;
  std::string bad_param_;
};

// Appends the percent-decoding of in to *out ('+' as a space iff plus_as_space) and returns
// the offset in in of the first bad '%' (not followed by two hex digits), or npos; *out then
// holds the bytes decoded before it. Runs between escapes are appended whole, so text with
// few escapes (archive keys: none, or one '|' sent as %7C) costs a memchr and one append.
// Inline: the archive decodes every key of every lookup with it (archive/key_params.h).
inline size_t PercentDecodeAppend(std::string_view in, bool plus_as_space, std::string* out) {
  auto hex_value = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  size_t i = 0;
  while (i < in.size()) {
    // find('%') is a memchr; find_first_of tests each byte against the set.
    const size_t j = plus_as_space ? in.find_first_of("%+", i) : in.find('%', i);
    if (j == std::string_view::npos) {
      out->append(in.substr(i));
      break;
    }
    out->append(in.substr(i, j - i));
    if (in[j] == '+') {
      out->push_back(' ');
      i = j + 1;
      continue;
    }
    if (j + 2 >= in.size()) return j;
    const int hi = hex_value(in[j + 1]), lo = hex_value(in[j + 2]);
    if (hi < 0 || lo < 0) return j;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i = j + 3;
  }
  return std::string_view::npos;
}

// Appends the percent-decoding of in to *out ('+' as space iff plus_as_space).
// Returns an error naming the first bad escape ("bad percent-encoding '%zz'"); *out then
// holds the bytes decoded before it.
Status PercentDecode(std::string_view in, bool plus_as_space, std::string* out);

// Appends in to *out with every byte outside A-Z a-z 0-9 - . _ ~ written as %XX
// (uppercase hex), so keys holding '+', '/', '=', '|', '&' or spaces survive a query string.
void PercentEncode(std::string_view in, std::string* out);
std::string PercentEncode(std::string_view in);

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_QUERY_H_
