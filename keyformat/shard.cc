#include "keyformat/shard.h"

#include <zlib.h>

namespace clickatron {

uint32_t Crc32(std::string_view bytes) {
  return uint32_t(crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

}  // namespace clickatron
