// Base64 (RFC 4648, standard alphabet, with '=' padding), as the etcd v3
// JSON gateway uses for keys and values (protobuf `bytes` fields).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace faultline::targets::etcd {

// Encodes arbitrary bytes.
std::string Base64Encode(std::string_view bytes);

// Decodes padded or unpadded standard base64. Whitespace is not accepted.
// Returns nullopt on a character outside the alphabet, misplaced padding, or
// an impossible length (1 mod 4).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace faultline::targets::etcd
