// Unit constants. Quantities carry their unit in their name (time_s, bytes, flops, gbps).
#pragma once

#include <cstdint>

namespace tessera::units {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kGiga = 1e9;
inline constexpr double kBitsPerByte = 8.0;
inline constexpr double kMicrosecond = 1e-6;
inline constexpr double kSecondsPerHour = 3600.0;
inline constexpr double kHoursPerDay = 24.0;

// Bytes per element of the number formats Tessera reasons about.
inline constexpr double kBytesBf16 = 2.0;
inline constexpr double kBytesFp32 = 4.0;
inline constexpr double kBytesFp8 = 1.0;

constexpr double gbps_to_bytes_per_s(double gbit_per_s) { return gbit_per_s * kGiga / kBitsPerByte; }
constexpr double gb_per_s_to_bytes_per_s(double gbyte_per_s) { return gbyte_per_s * kGB; }

}  // namespace tessera::units
