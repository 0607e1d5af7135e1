// The largest gRPC message the data service sends or receives, on both ends of every channel.
#pragma once

namespace tessera {

// A micro-batch of patches can be large: 8 images of 1344 x 1344 x 3 bytes is 43 MB, and gRPC's
// default receive limit is 4 MiB (grpc/impl/codegen/grpc_types.h GRPC_DEFAULT_MAX_RECV_MESSAGE_LENGTH).
// tessera.data (python/tessera/data.py _MAX_MESSAGE_BYTES) uses the same 1 GiB.
inline constexpr int kMaxMessageBytes = 1 << 30;

}  // namespace tessera
