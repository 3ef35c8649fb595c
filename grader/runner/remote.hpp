// What the judge and the runner say to each other: one request, one reply, each a JSON message on
// a Unix socket (SOCK_SEQPACKET: message boundaries kept, descriptors passed alongside).
//
// The judge holds the inputs, the expected sums, the secrets and the clock; the runner holds the
// chapter's code and nothing else. It maps the buffers the judge names, runs the chapter's
// launcher on them, waits for the device and says what the launcher returned. Everything the
// runner says is treated as untrusted by the judge: sizes are bounded, counts are checked, and a
// reply that is late or malformed ends the runner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "runner/visible_text.hpp"  // a Registration's names are the learner's text
#include "workbook/contract.hpp"

namespace workbook {

// The contract's enums by name (in their own namespace, where nlohmann finds them).
NLOHMANN_JSON_SERIALIZE_ENUM(ChapterKind, {{ChapterKind::block_pass, "block_pass"}, {ChapterKind::full, "full"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Element, {{Element::f32, "f32"},
                                       {Element::f64, "f64"},
                                       {Element::f16, "f16"},
                                       {Element::bf16, "bf16"},
                                       {Element::i32, "i32"},
                                       {Element::i64, "i64"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Operator, {{Operator::sum, "sum"},
                                        {Operator::max, "max"},
                                        {Operator::min, "min"},
                                        {Operator::argmax, "argmax"},
                                        {Operator::argmin, "argmin"},
                                        {Operator::dot, "dot"},
                                        {Operator::mean_variance, "mean_variance"}})

}  // namespace workbook

namespace workbook::remote {

//! The descriptor number the runner finds its socket on.
inline constexpr int kRunnerFd = 3;
//! The longest message either side sends or accepts.
inline constexpr std::size_t kMaxMessageBytes = std::size_t(1) << 20;

enum class Op { hello, map, unmap, workspace_bytes, run, quit };
NLOHMANN_JSON_SERIALIZE_ENUM(Op, {{Op::hello, "hello"},
                                  {Op::map, "map"},
                                  {Op::unmap, "unmap"},
                                  {Op::workspace_bytes, "workspace_bytes"},
                                  {Op::run, "run"},
                                  {Op::quit, "quit"}})

//! What a call runs: the chapter's block pass, its full reduction, its tuned launcher, its
//! generic reduction, or one rank's part of a reduction over several GPUs (consecutive rank calls
//! are one collective: one rank each, every rank of the communicator, in rank order).
enum class CallKind { block_pass, reduce, tuned, generic, rank };
NLOHMANN_JSON_SERIALIZE_ENUM(CallKind, {{CallKind::block_pass, "block_pass"},
                                        {CallKind::reduce, "reduce"},
                                        {CallKind::tuned, "tuned"},
                                        {CallKind::generic, "generic"},
                                        {CallKind::rank, "rank"}})

//! A place in a shared buffer: the judge's allocation id and a byte offset into it.
struct Place {
  std::uint64_t buffer = 0;
  std::uint64_t offset = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Place, buffer, offset)

struct Call {
  CallKind kind = CallKind::block_pass;
  Place in, out, workspace;
  std::uint64_t n = 0;
  std::uint64_t capacity = 0;        // block pass: room for partials
  int stream = 0;                    // the runner's stream 0 or 1
  unsigned blocks = 0, threads = 0;  // tuned
  Element element = Element::f32;    // generic
  Operator op = Operator::sum;       // generic
  Place in2;                         // generic: dot's second input
  int device = 0;                    // rank: the GPU its buffers are on, and its rank's
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Call, kind, in, out, workspace, n, capacity, stream, blocks, threads,
                                                element, op, in2, device)

//! A buffer to map: its id and size; its memory comes with the message as a descriptor.
struct Mapping {
  std::uint64_t buffer = 0;
  std::uint64_t bytes = 0;
  int device = 0;  // the GPU it lives on
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Mapping, buffer, bytes, device)

struct Request {
  Op op = Op::hello;
  Mapping map;                       // map (one buffer a message: one descriptor)
  std::vector<std::uint64_t> unmap;  // unmap
  std::uint64_t n = 0;               // workspace_bytes
  std::vector<Call> calls;           // run: enqueued in order, then every stream is waited for
  Place ready;                       // run: a word of the judge's (GpuOrder) that the streams wait on,
  std::uint64_t ready_value = 0;     // until it holds this or more, before the calls (0: no wait)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Request, op, map, unmap, n, calls, ready, ready_value)

//! What one call's launcher did.
struct CallResult {
  std::uint64_t count = 0;   // block pass: the partials it says it wrote
  std::string launch_error;  // cudaGetLastError() after it, if not cudaSuccess
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CallResult, count, launch_error)

//! The implementation the runner holds, as it registered (hello). Its names come from the
//! learner's code (a registration macro with WORKBOOK_CHAPTER redefined, or register_entry
//! called directly): the judge checks they are plain names (plain_name) and quotes them
//! through visible().
struct Registration {
  int registered = 0;  // how many entries registered (exactly one is right)
  std::string chapter, subject;
  ChapterKind kind = ChapterKind::block_pass;
  bool tuned = false;
  bool generic = false;
  bool rank = false;  // a reduction over several GPUs (WORKBOOK_RANK_REDUCE)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Registration, registered, chapter, subject, kind, tuned, generic, rank)

struct Reply {
  std::string error;                // the request could not be done (a mapping failed, no device)
  Registration registration;        // hello
  std::uint64_t bytes = 0;          // workspace_bytes
  std::vector<CallResult> results;  // run
  std::string sync_error;           // run: the first error waiting for the streams
  bool context_lost = false;        // run: that error is sticky: no later call can run
  bool gpu_order = false;           // hello: its streams can wait on the GPU for a word (GpuOrder)
  bool out_of_memory = false;       // hello: its CUDA context could not be made for want of device memory
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Reply, error, registration, bytes, results, sync_error, context_lost,
                                                gpu_order, out_of_memory)

//! One call of the chapter's launcher with its buffers in this process's memory: what a runner
//! makes of a Call once the buffers are mapped, and what a judge with the chapter linked in runs.
struct LocalCall {
  CallKind kind = CallKind::block_pass;
  const float* in = nullptr;
  std::size_t n = 0;
  float* out = nullptr;            // partials (block pass) or *out (full)
  std::size_t capacity = 0;        // block pass: room for partials
  void* workspace = nullptr;       // full
  int stream = 0;                  // 0 or 1: calls on different streams may run at the same time
  Launch launch{};                 // tuned
  Element element = Element::f32;  // generic: in, in2 and out hold this problem's types, not floats
  Operator op = Operator::sum;
  const void* in2 = nullptr;
  int device = 0;  // rank: its GPU
};

//! Runs one collective's rank calls (a run of consecutive CallKind::rank calls) with `fn`: each
//! rank on its device and a stream of that device, in one NCCL group, filling `results` (one per
//! call) and naming in `streams` every (device, stream) it enqueued on, for run_locally to wait
//! for. runner/ranks.cpp registers it, in the programs NCCL is linked into.
using RankGroupRunner = void (*)(RankReduceFn fn, const std::vector<LocalCall>& calls, std::vector<CallResult>& results,
                                 std::vector<std::pair<int, cudaStream_t>>& streams);
//! Registers the runner of rank calls; returns true so it can initialize a namespace-scope constant.
bool set_rank_group_runner(RankGroupRunner runner);

//! What the entries linked into this process registered as.
Registration registration_of(const std::vector<Entry>& entries);

//! Runs `calls` with `entry`'s launchers, each on streams[0] or streams[1], then waits for both:
//! a reply with each launcher's result (and cudaGetLastError() after it), and the first error a
//! stream reports (sync_error; context_lost when it is sticky). A non-sticky error is cleared so
//! that it does not leak into the next call. The runner and a judge with the chapter linked in
//! both run calls this way.
Reply run_locally(const Entry& entry, const std::vector<LocalCall>& calls, const cudaStream_t (&streams)[2]);

//! Sends one message (and a descriptor, if `fd` >= 0); false if the socket is closed.
bool send_message(int socket, const nlohmann::json& message, int fd = -1);

//! What receive() got.
struct Received {
  nlohmann::json message;
  int fd = -1;          // a descriptor that came with it, or -1
  std::string problem;  // "" or why there is no message: closed, timed out, malformed
  bool timed_out = false;
};
//! Waits up to `timeout_s` (0: no limit) for one message of at most kMaxMessageBytes.
Received receive(int socket, double timeout_s);

}  // namespace workbook::remote
