#pragma once
namespace tessera {
// Version of every JSON document the CLI prints; bump on an incompatible field change.
inline constexpr int kSchemaVersion = 1;
}  // namespace tessera
