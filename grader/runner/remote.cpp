#include "runner/remote.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runner/cuda_check.hpp"

namespace workbook::remote {

Registration registration_of(const std::vector<Entry>& entries) {
  Registration r;
  r.registered = static_cast<int>(entries.size());
  if (!entries.empty()) {
    r.chapter = entries.front().chapter;
    r.subject = entries.front().subject;
    r.kind = entries.front().kind;
    r.tuned = entries.front().tuned != nullptr;
    r.generic = entries.front().generic != nullptr;
    r.rank = entries.front().rank != nullptr;
  }
  return r;
}

namespace {
RankGroupRunner& rank_group_runner() {
  static RankGroupRunner runner = nullptr;
  return runner;
}
}  // namespace

bool set_rank_group_runner(RankGroupRunner runner) {
  rank_group_runner() = runner;
  return true;
}

Reply run_locally(const Entry& entry, const std::vector<LocalCall>& calls, const cudaStream_t (&streams)[2]) {
  Reply reply;
  std::vector<std::pair<int, cudaStream_t>> rank_streams;  // every (device, stream) a collective used
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const LocalCall& c = calls[i];
    if (c.kind == CallKind::rank) {  // this call and the rank calls after it: one collective
      std::size_t end = i;
      while (end < calls.size() && calls[end].kind == CallKind::rank) ++end;
      const std::vector<LocalCall> group(calls.begin() + static_cast<std::ptrdiff_t>(i),
                                         calls.begin() + static_cast<std::ptrdiff_t>(end));
      std::vector<CallResult> results(group.size());
      if (entry.rank && rank_group_runner()) {
        rank_group_runner()(entry.rank, group, results, rank_streams);
      } else {
        for (CallResult& r : results) {
          r.launch_error = entry.rank ? "this program was built without NCCL: it cannot run a reduction over "
                                        "several GPUs"
                                      : "the registered implementation has no launcher of this kind";
        }
      }
      reply.results.insert(reply.results.end(), results.begin(), results.end());
      i = end - 1;
      continue;
    }
    CallResult result;
    cudaStream_t stream = streams[c.stream == 1 ? 1 : 0];
    if (c.kind == CallKind::block_pass && entry.block_pass) {
      result.count = entry.block_pass(c.in, c.n, c.out, c.capacity, stream);
    } else if (c.kind == CallKind::reduce && entry.reduce) {
      entry.reduce(c.in, c.n, c.out, c.workspace, stream);
    } else if (c.kind == CallKind::tuned && entry.tuned) {
      entry.tuned(c.in, c.n, c.out, c.workspace, stream, c.launch);
    } else if (c.kind == CallKind::generic && entry.generic) {
      entry.generic(Problem{c.element, c.op, c.in, c.in2, c.n, c.out}, c.workspace, stream);
    } else {
      result.launch_error = "the registered implementation has no launcher of this kind";
    }
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) result.launch_error = error_text(err);
    reply.results.push_back(result);
  }
  auto wait = [&](cudaStream_t s) {
    const cudaError_t err = cudaStreamSynchronize(s);
    if (err != cudaSuccess && reply.sync_error.empty()) {
      reply.sync_error = error_text(err);
      reply.context_lost = is_sticky(err);
    }
  };
  for (cudaStream_t s : streams) wait(s);
  for (const auto& [device, s] : rank_streams) {
    const DeviceScope on(device);
    wait(s);
  }
  if (!reply.context_lost) cudaGetLastError();
  return reply;
}

bool send_message(int socket, const nlohmann::json& message, int fd) {
  const std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxMessageBytes) return false;
  msghdr m{};
  iovec io{const_cast<char*>(text.data()), text.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    const ssize_t n = sendmsg(socket, &m, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n) == text.size();
    if (errno != EINTR) return false;
  }
}

Received receive(int socket, double timeout_s) {
  Received r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        r.timed_out = true;
        r.problem = "no answer in time";
        return r;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    pollfd p{socket, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      r.problem = std::string("poll: ") + std::strerror(errno);
      return r;
    }
    if (ready == 1) break;
  }
  // One buffer a thread, kept: a fresh 1 MiB for each message cost a page fault a page, twice a
  // round trip, inside every timed batch.
  thread_local std::vector<char> buffer(kMaxMessageBytes + 1);
  msghdr m{};
  iovec io{buffer.data(), buffer.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (r.fd < 0)
        r.fd = fd;
      else
        close(fd);  // one descriptor per message; more are closed
    }
  }
  if (n <= 0) {
    r.problem = n == 0 ? "the other side closed the connection" : std::string("recvmsg: ") + std::strerror(errno);
    return r;
  }
  if ((m.msg_flags & MSG_TRUNC) || static_cast<std::size_t>(n) > kMaxMessageBytes) {
    r.problem = "a message longer than any the protocol has";
    return r;
  }
  try {
    r.message = nlohmann::json::parse(buffer.begin(), buffer.begin() + n);
  } catch (const nlohmann::json::exception&) {
    r.problem = "a message that is not JSON";
  }
  return r;
}

}  // namespace workbook::remote
