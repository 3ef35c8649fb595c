// A reduction over several GPUs, before it is a chapter: each GPU reduces its shard with chapter
// 11's reference (one launch, found in the registry) and NCCL combines the shards' sums.
//
//   multi_gpu [--gpus K] [--log2 L]                     one process drives K GPUs (ncclCommInitAll)
//   multi_gpu --rank R --ranks K --id FILE [--log2 L]   one process per GPU, as MPI or torchrun
//                                                       start them (multi_gpu_ranks.sh): rank 0
//                                                       writes NCCL's unique id to FILE
//
// Each GPU holds 2^L floats (default 30). Per K and L: the median time of a whole reduction (every
// shard reduced, then ncclAllReduce of one float), against one GPU reducing all K shards' elements
// in one call, and the all-reduce of one float alone; the result checked against the host's sum of the same values, and
// its bits equal on every rank. Then the vector case as nccl-tests reports it: ncclAllReduce and ncclReduceScatter of
// 2^10 to 2^28 floats, algbw = bytes / time and busbw = algbw * 2(K-1)/K (all-reduce) or (K-1)/K (reduce-scatter).
// NVLink multicast stays off (NCCL_NVLS_ENABLE=0). Every time is the median of the host's clock over calls that each
// wait for the GPUs. CSV lines: "csv-scalar,nccl,ranks,launch,log2,ms,one_gpu_ms,allreduce_us,bits,right,same_bits" and
// "csv-vector,collective,ranks,launch,log2_count,ms,algbw_gbps,busbw_gbps".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nccl.h>

#include "common.cuh"
#include "runner/registry.hpp"

namespace {

#define NCCL_CHECK(call)                                                               \
  do {                                                                                 \
    const ncclResult_t r_ = (call);                                                    \
    if (r_ != ncclSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

struct Gpu {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* shard = nullptr;     // 2^L floats
  float* sum = nullptr;       // this shard's sum, then (in place) the all-reduced total
  void* workspace = nullptr;  // chapter 11's
  float* vector = nullptr;    // the vector case's buffer, the largest count
};

const workbook::Entry& chapter11() {
  const workbook::Entry* e = workbook::find_entry("11_last_block", "reference");
  if (e == nullptr) {
    std::fprintf(stderr, "11_last_block's reference is not linked in\n");
    std::exit(1);
  }
  return *e;
}

// The shard of rank r: fill()'s values with an offset per rank, so the shards differ.
void make_shard(Gpu& g, std::size_t n, std::size_t max_vector) {
  CHECK(cudaSetDevice(g.device));
  CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&g.shard, n * sizeof(float)));
  CHECK(cudaMalloc(&g.sum, sizeof(float)));
  const std::size_t ws = std::max<std::size_t>(chapter11().workspace_bytes(n), 16);
  CHECK(cudaMalloc(&g.workspace, ws));
  CHECK(cudaMemset(g.workspace, 0, ws));
  CHECK(cudaMalloc(&g.vector, max_vector * sizeof(float)));
  CHECK(cudaMemset(g.vector, 0, max_vector * sizeof(float)));
  fill<<<1024, 256, 0, g.stream>>>(g.shard, n, 1536, 1024, -0.5f + 0.125f * g.rank);
  CHECK(cudaStreamSynchronize(g.stream));
}

// The host's sum of rank r's shard in double (the same formula as fill), and its magnitude.
void host_sum(std::size_t n, int rank, double& sum, double& magnitude) {
  sum = magnitude = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = static_cast<float>((i * 2654435761u) % 1536) / 1024 + (-0.5f + 0.125f * rank);
    sum += x;
    magnitude += std::fabs(x);
  }
}

// Every GPU this process drives: reduce its shard, then all-reduce the one float, in one group.
void reduce_all(std::vector<Gpu>& gpus, std::size_t n) {
  for (Gpu& g : gpus) {
    CHECK(cudaSetDevice(g.device));
    chapter11().reduce(g.shard, n, g.sum, g.workspace, g.stream);
  }
  NCCL_CHECK(ncclGroupStart());
  for (Gpu& g : gpus) NCCL_CHECK(ncclAllReduce(g.sum, g.sum, 1, ncclFloat, ncclSum, g.comm, g.stream));
  NCCL_CHECK(ncclGroupEnd());
  for (Gpu& g : gpus) {
    CHECK(cudaSetDevice(g.device));
    CHECK(cudaStreamSynchronize(g.stream));
  }
}

// The median wall time of `reps` calls of f() (each returns with this process's GPUs idle), after
// `warm` untimed ones. Across processes the ranks meet in every call's all-reduce.
template <class F>
double median_wall_ms(F&& f, int warm = 3, int reps = 20) {
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> t(reps);
  for (double& ms : t) {
    const auto a = std::chrono::steady_clock::now();
    f();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  }
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}

std::string arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

// One process per GPU: rank 0 makes the id and writes it (a file renamed into place, so no rank
// reads half of it); the others wait for it.
ncclUniqueId shared_id(int rank, const std::string& file) {
  ncclUniqueId id;
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string part = file + ".part";
    std::ofstream(part, std::ios::binary).write(id.internal, sizeof id.internal);
    std::filesystem::rename(part, file);
    return id;
  }
  for (int waited = 0; !std::filesystem::exists(file); ++waited) {
    if (waited > 600) {
      std::fprintf(stderr, "rank %d: no NCCL id in %s after 60 s\n", rank, file.c_str());
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::ifstream(file, std::ios::binary).read(id.internal, sizeof id.internal);
  return id;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast off, before NCCL reads its environment
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int log2 = std::stoi(arg(argc, argv, "--log2", "30"));
  const std::size_t n = std::size_t{1} << log2;
  const std::size_t max_vector = std::size_t{1} << 28;
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  const bool per_process = arg(argc, argv, "--rank", "").size() > 0;
  const int ranks = per_process ? std::stoi(arg(argc, argv, "--ranks", "1"))
                                : std::stoi(arg(argc, argv, "--gpus", std::to_string(visible).c_str()));
  const int first_rank = per_process ? std::stoi(arg(argc, argv, "--rank", "0")) : 0;
  const int local = per_process ? 1 : ranks;
  if (ranks < 1 || (!per_process && ranks > visible)) {
    std::fprintf(stderr, "%d GPUs asked, %d visible\n", ranks, visible);
    return 77;
  }

  std::vector<Gpu> gpus(local);
  for (int k = 0; k < local; ++k) {
    gpus[k].rank = first_rank + k;
    gpus[k].device = per_process ? gpus[k].rank % visible : k;
    make_shard(gpus[k], n, max_vector);
  }
  if (per_process) {
    const ncclUniqueId id = shared_id(first_rank, arg(argc, argv, "--id", "nccl.id"));
    CHECK(cudaSetDevice(gpus[0].device));
    NCCL_CHECK(ncclCommInitRank(&gpus[0].comm, ranks, id, first_rank));
  } else {
    std::vector<ncclComm_t> comms(ranks);
    std::vector<int> devices(ranks);
    for (int k = 0; k < ranks; ++k) devices[k] = gpus[k].device;
    NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, devices.data()));
    for (int k = 0; k < ranks; ++k) gpus[k].comm = comms[k];
  }
  const bool reporter = first_rank == 0;
  int nccl_version = 0;
  NCCL_CHECK(ncclGetVersion(&nccl_version));
  if (reporter) {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, gpus[0].device));
    std::printf("%s x %d, %s, NCCL %d, 2^%d floats a GPU\n", prop.name, ranks,
                per_process ? "one process a GPU" : "one process", nccl_version, log2);
  }

  // The whole reduction, and whether every rank got the same bits and the right sum.
  const double ms = median_wall_ms([&] { reduce_all(gpus, n); });
  // The all-reduce of one float alone, as the whole reduction issues it: its latency.
  const double allreduce_ms = median_wall_ms([&] {
    NCCL_CHECK(ncclGroupStart());
    for (Gpu& g : gpus) NCCL_CHECK(ncclAllReduce(g.vector, g.vector, 1, ncclFloat, ncclSum, g.comm, g.stream));
    NCCL_CHECK(ncclGroupEnd());
    for (Gpu& g : gpus) {
      CHECK(cudaSetDevice(g.device));
      CHECK(cudaStreamSynchronize(g.stream));
    }
  });
  float got = 0;
  CHECK(cudaMemcpy(&got, gpus[0].sum, sizeof got, cudaMemcpyDeviceToHost));
  // The same bits on every rank, in every process: the largest and the smallest of the ranks' bit
  // patterns, each all-reduced as an unsigned integer, are one pattern only if every rank has it.
  NCCL_CHECK(ncclGroupStart());
  for (Gpu& g : gpus) {
    CHECK(cudaSetDevice(g.device));
    auto* bits = reinterpret_cast<unsigned*>(g.vector);
    CHECK(cudaMemcpyAsync(bits, g.sum, sizeof(unsigned), cudaMemcpyDeviceToDevice, g.stream));
    CHECK(cudaMemcpyAsync(bits + 1, g.sum, sizeof(unsigned), cudaMemcpyDeviceToDevice, g.stream));
    NCCL_CHECK(ncclAllReduce(bits, bits, 1, ncclUint32, ncclMax, g.comm, g.stream));
    NCCL_CHECK(ncclAllReduce(bits + 1, bits + 1, 1, ncclUint32, ncclMin, g.comm, g.stream));
  }
  NCCL_CHECK(ncclGroupEnd());
  unsigned highest_lowest[2] = {0, 0};
  CHECK(cudaSetDevice(gpus[0].device));
  CHECK(cudaStreamSynchronize(gpus[0].stream));
  CHECK(cudaMemcpy(highest_lowest, gpus[0].vector, sizeof highest_lowest, cudaMemcpyDeviceToHost));
  const bool same_bits = highest_lowest[0] == highest_lowest[1];
  double want = 0, magnitude = 0;
  for (int r = 0; r < ranks; ++r) {
    double s, m;
    host_sum(n, r, s, m);
    want += s;
    magnitude += m;
  }
  // Any order of float additions: within (elements + ranks) units of 2^-24 of the magnitude.
  const double bound = (static_cast<double>(n) * ranks + ranks) * std::ldexp(1.0, -24) * magnitude;
  const bool right = std::fabs(got - want) <= bound;
  unsigned bits = 0;
  std::memcpy(&bits, &got, sizeof bits);

  // One GPU, all K shards' elements in one call (the shards laid end to end on GPU 0), if they fit.
  double one_gpu_ms = 0;
  if (reporter && !per_process) {
    Gpu& g = gpus[0];
    CHECK(cudaSetDevice(g.device));
    float* all = nullptr;
    void* ws = nullptr;
    const std::size_t total = n * ranks;
    if (cudaMalloc(&all, total * sizeof(float)) == cudaSuccess) {
      const std::size_t ws_bytes = std::max<std::size_t>(chapter11().workspace_bytes(total), 16);
      CHECK(cudaMalloc(&ws, ws_bytes));
      CHECK(cudaMemset(ws, 0, ws_bytes));
      for (int r = 0; r < ranks; ++r) {
        fill<<<1024, 256, 0, g.stream>>>(all + r * n, n, 1536, 1024, -0.5f + 0.125f * r);
      }
      // The same clock as the whole reduction's: the host's, each call waited for.
      one_gpu_ms = median_wall_ms([&] {
        chapter11().reduce(all, total, g.sum, ws, g.stream);
        CHECK(cudaStreamSynchronize(g.stream));
      });
      CHECK(cudaFree(ws));
      CHECK(cudaFree(all));
    } else {
      cudaGetLastError();
    }
  }
  if (reporter) {
    std::printf(
        "whole reduction: %.3f ms (%.0f GB/s over all GPUs), one GPU on the same elements %.3f ms: "
        "%.2fx; the all-reduce of one float alone %.1f us; sum %.9g (bits 0x%08x), host %.9g, %s, %s on "
        "every rank\n",
        ms, n * ranks * sizeof(float) / ms / 1e6, one_gpu_ms, one_gpu_ms > 0 ? one_gpu_ms / ms : 0.0,
        1e3 * allreduce_ms, got, bits, want, right ? "within the bound" : "WRONG",
        same_bits ? "same bits" : "DIFFERENT bits");
    std::printf("csv-scalar,%d,%d,%s,%d,%.4f,%.4f,%.2f,0x%08x,%d,%d\n", nccl_version, ranks,
                per_process ? "per_process" : "one_process", log2, ms, one_gpu_ms, 1e3 * allreduce_ms, bits, right,
                same_bits);
  }

  // The vector case: nccl-tests' algbw and busbw.
  for (int lg = 10; lg <= 28; lg += 2) {
    const std::size_t count = std::size_t{1} << lg;
    for (const bool scatter : {false, true}) {
      if (scatter && count % ranks) continue;
      const double t = median_wall_ms([&] {
        NCCL_CHECK(ncclGroupStart());
        for (Gpu& g : gpus) {
          if (scatter) {
            NCCL_CHECK(ncclReduceScatter(g.vector, g.vector + g.rank * (count / ranks), count / ranks, ncclFloat,
                                         ncclSum, g.comm, g.stream));
          } else {
            NCCL_CHECK(ncclAllReduce(g.vector, g.vector, count, ncclFloat, ncclSum, g.comm, g.stream));
          }
        }
        NCCL_CHECK(ncclGroupEnd());
        for (Gpu& g : gpus) {
          CHECK(cudaSetDevice(g.device));
          CHECK(cudaStreamSynchronize(g.stream));
        }
      });
      const double algbw = count * sizeof(float) / t / 1e6;
      const double busbw = algbw * (scatter ? (ranks - 1.0) / ranks : 2.0 * (ranks - 1) / ranks);
      if (reporter) {
        std::printf("csv-vector,%s,%d,%s,%d,%.4f,%.1f,%.1f\n", scatter ? "reduce_scatter" : "all_reduce", ranks,
                    per_process ? "per_process" : "one_process", lg, t, algbw, busbw);
      }
    }
  }
  for (Gpu& g : gpus) NCCL_CHECK(ncclCommDestroy(g.comm));
  return right && same_bits ? 0 : 1;
}
