// Hex64: a 64-bit checksum as text, the form every XXH64 takes in Clickatron's text formats
// (the `#END` footer, the generation manifest, shard metadata, generation and source ids).
//
//   exactly 16 digits, 0-9 a-f (lowercase), most significant first: ef46db3751d8e999
//
// One spelling so that two writers of the same checksum write the same bytes and a reader
// can compare checksums as strings (ops/restore-archive does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

inline constexpr size_t kHex64Size = 16;

// The 16 lowercase hex digits of value, zero-padded.
std::string Hex64(uint64_t value);

// Inverse of Hex64; fails on any other length or an uppercase or non-hex digit:
// "'0123' is not 16 lowercase hex digits".
Result<uint64_t> ParseHex64(std::string_view text);

}  // namespace clickatron
