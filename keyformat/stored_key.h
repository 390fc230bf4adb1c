// Stored keys and lookup hashes (docs/formats.md#keys-and-hashes), and namespace names.
//
// A user-supplied key or subkey is stored literally when it is 1–11 bytes of 0x21–0x7E
// with none of the reserved `:` `,` `.` `|`; otherwise as its hash: standard base64 (with
// `=` padding) of the first 8 bytes of its MD5 — always 12 characters, so a hash never
// equals a literal. Every hashed value also needs a lookup record `_l|<hash>` → original.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr size_t kMaxLiteralKeySize = 11;
inline constexpr size_t kHashSize = 12;
inline constexpr size_t kMaxUserKeySize = 4096;
inline constexpr size_t kMaxNamespaceSize = 16;

// True when `value` is stored as itself. REQUIRES: value is a valid user key.
bool IsLiteralKey(std::string_view value);

// The 12-character hash of `value` (docs/formats.md#keys-and-hashes), appended to *out.
void AppendKeyHash(std::string_view value, std::string* out);
std::string KeyHash(std::string_view value);

// The stored form of `value`: itself or its hash. Appends to *out; returns true if hashed.
bool AppendStoredKey(std::string_view value, std::string* out);
std::string StoredKey(std::string_view value);

// OK for a user key or subkey of 1–4096 bytes; `what` names it in the error ("key").
Status ValidateUserKey(std::string_view value, std::string_view what = "key");

// OK for a namespace or subtotal namespace: [A-Za-z0-9][A-Za-z0-9_-]{0,15}. Names that
// begin with `_` are the system's (`_l`) and are rejected here.
Status ValidateNamespace(std::string_view name, std::string_view what = "namespace");
// The same rule without the reason: true exactly when ValidateNamespace is OK.
bool IsNamespace(std::string_view name);

// True when `text` looks like a stored hash: 12 base64 characters ending in '='.
bool IsKeyHash(std::string_view text);

// Which bytes may appear in a literal key (printable ASCII but the separators ':' ',' '.'
// '|'), in a key hash (base64) and in a namespace: one table lookup a byte, for the checks
// above and the one-pass key parser (records.cc), where the checks of each imported key
// were 5 % of an import (docs/benchmarks.md#rebuild).
inline constexpr uint8_t kLiteralKeyByte = 1, kBase64Byte = 2, kNamespaceFirstByte = 4, kNamespaceByte = 8;
struct KeyByteClasses {
  uint8_t bits[256] = {};
  constexpr KeyByteClasses() {
    for (int c = 0x21; c <= 0x7E; ++c) {
      if (c != ':' && c != ',' && c != '.' && c != '|') bits[c] |= kLiteralKeyByte;
      const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (alnum) bits[c] |= kNamespaceFirstByte | kNamespaceByte | kBase64Byte;
      if (c == '_' || c == '-') bits[c] |= kNamespaceByte;
      if (c == '+' || c == '/') bits[c] |= kBase64Byte;
    }
  }
  uint8_t operator[](char c) const { return bits[static_cast<unsigned char>(c)]; }
};
inline constexpr KeyByteClasses kKeyByteClasses;

// The end of the namespace that starts at text[from]: past its first byte and the
// namespace bytes after it (from itself when text[from] cannot start one). The caller
// checks the size (kMaxNamespaceSize).
inline size_t NamespaceEnd(std::string_view text, size_t from) {
  if (from >= text.size() || !(kKeyByteClasses[text[from]] & kNamespaceFirstByte)) return from;
  size_t i = from + 1;
  while (i < text.size() && (kKeyByteClasses[text[i]] & kNamespaceByte)) ++i;
  return i;
}

// The end of the run of literal-key bytes that starts at text[from].
inline size_t LiteralKeyEnd(std::string_view text, size_t from) {
  size_t i = from;
  while (i < text.size() && (kKeyByteClasses[text[i]] & kLiteralKeyByte)) ++i;
  return i;
}

}  // namespace clickatron
