// Where checkpoints go and how fast: the shared file system's aggregate write and read bandwidth
// (all writers together), one node's write bandwidth to it (its front-end NIC), and each GPU's
// device-to-host copy bandwidth (what an asynchronous save blocks on). GB/s are 1e9 bytes/s.
#pragma once

namespace tessera {

// Llama 3 (arXiv 2407.21783, section 3.3.1): Tectonic serves 2 TB/s sustained and 7 TB/s peak
// to the 16,384-GPU job; we take the sustained figure for both writes and reads.
inline constexpr double kDefaultStorageWriteGbps = 2000.0;
inline constexpr double kDefaultStorageReadGbps = 2000.0;
// One node's path to storage: an assumption of one 200 Gb/s front-end NIC per node (25 GB/s);
// the Llama 3 paper gives no per-node figure. It binds only when few ranks write (see
// checkpoint_cost.h: not fully parallel save).
inline constexpr double kDefaultNodeWriteGbps = 25.0;
// H100 SXM host interface: PCIe Gen5 x16, 64 GB/s each way (NVIDIA H100 datasheet: "PCIe Gen5
// 128 GB/s" bidirectional). An upper bound on the copy an asynchronous save blocks on.
inline constexpr double kDefaultDeviceToHostGbps = 64.0;

struct StorageSpec {
  double write_gbps = kDefaultStorageWriteGbps;
  double read_gbps = kDefaultStorageReadGbps;
  double node_write_gbps = kDefaultNodeWriteGbps;
  double device_to_host_gbps = kDefaultDeviceToHostGbps;
  void validate() const;  // Error("storage.<field>", ...): each in (0, kMaxStorageGbps]
};

// 1 PB/s: above any file system in service; a larger figure is a unit slip (MB/s for GB/s).
inline constexpr double kMaxStorageGbps = 1e6;

}  // namespace tessera
