// KeyParams: the keys (and limit) of a sortdb-style request, decoded from the raw query.
//
// sortdb's clients send keys the way sortdb read them, which is not plain form decoding:
// evhttp turned '+' into a space and sortdb turned every space back into '+', so a
// Clickatron hash such as `h0aMB8AuNw4=` or one holding '+' works whether the client
// percent-encoded it or not. We keep that contract without its lossy part: '%XX' is
// decoded, and '+' stays a literal '+' (a real space must be sent as %20). A '%' not
// followed by two hex digits is an error (400), never a silently different key.
//
// /fwmatch pages with `after=KEY` (decoded like a key), as the realtime server's does.
//
// Which parameters are keys: for /get and /fwmatch the first one named `key`; for /mget,
// like sortdb, every parameter whose name starts with 'k' ("key", "k", "keys"...).
//
// A KeyParams is reused for every request of one event loop: once its buffers have grown
// to the largest request seen, parsing allocates nothing. Views stay valid until the next
// Parse(). Not thread-safe.
#ifndef CLICKATRON_ARCHIVE_KEY_PARAMS_H_
#define CLICKATRON_ARCHIVE_KEY_PARAMS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clickatron::archive {

// Longest key a request may ask for (docs/formats.md#keys-and-hashes: keys over 4096 bytes are rejected).
inline constexpr size_t kMaxKeyBytes = 4096;

class KeyParams {
 public:
  enum class Mode { kFirstKey, kEveryK };

  // Decodes raw (the text after '?'). On failure returns false and error() names the
  // problem and error_name() gives the status text (INVALID_ARG_KEY / INVALID_ARG_LIMIT).
  bool Parse(std::string_view raw, Mode mode);

  const std::vector<std::string_view>& keys() const { return keys_; }
  // The `limit` parameter's raw text, if given.
  std::optional<std::string_view> limit() const { return limit_; }
  // /fwmatch's `after` (decoded like a key; empty when absent): list keys greater than it.
  std::string_view after() const { return after_; }
  const std::string& error() const { return error_; }
  const char* error_name() const { return error_name_; }

 private:
  bool Fail(const char* name, std::string message);

  std::string buffer_;                 // decoded keys, back to back
  std::vector<size_t> ends_;           // end offset of each key in buffer_
  std::vector<std::string_view> keys_;
  std::optional<std::string_view> limit_;
  std::string after_;
  std::string error_;
  const char* error_name_ = "";
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_KEY_PARAMS_H_
