// The one fact of the judge's channel a runner must know: where compute-sanitizer's findings go.
#pragma once

namespace workbook::channel {

//! compute-sanitizer writes its findings to this descriptor (`--log-file /proc/self/fd/5`), a pipe the
//! judge reads; the runner closes every descriptor of that pipe before any of the chapter's code runs,
//! so nothing the chapter prints can pass for a finding.
inline constexpr int kSanitizerLogFd = 5;
inline constexpr const char* kSanitizerLogFile = "/proc/self/fd/5";

}  // namespace workbook::channel
