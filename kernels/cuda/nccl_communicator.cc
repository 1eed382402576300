#include "kernels/cuda/nccl_communicator.h"

#include <dlfcn.h>

#include <string>

namespace llmserve::kernels::cuda {

namespace {

// The part of NCCL's C ABI used here (nccl.h, NCCL 2.x): results are an
// int enum with 0 for success; float32 is data type 7, sum is op 0; the
// unique id is passed by value.
using NcclResult = int;
constexpr NcclResult kNcclSuccess = 0;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclSum = 0;

struct NcclApi {
  NcclResult (*get_unique_id)(NcclId*) = nullptr;
  NcclResult (*comm_init_rank)(void** comm, int nranks, NcclId id, int rank) = nullptr;
  NcclResult (*all_reduce)(const void* send, void* recv, size_t count, int datatype, int op, void* comm,
                           cudaStream_t stream) = nullptr;
  NcclResult (*comm_destroy)(void* comm) = nullptr;
  const char* (*get_error_string)(NcclResult) = nullptr;
  std::string error;  // why the library could not be loaded
};

template <typename F>
bool Resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

const NcclApi& Api() {
  static const NcclApi api = []() {
    NcclApi a;
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      a.error = std::string("cannot load libnccl.so.2 (NCCL, needed for tensor parallelism on GPUs; put its "
                            "directory on LD_LIBRARY_PATH): ") +
                (why ? why : "unknown error");
      return a;
    }
    if (!Resolve(lib, "ncclGetUniqueId", &a.get_unique_id) || !Resolve(lib, "ncclCommInitRank", &a.comm_init_rank) ||
        !Resolve(lib, "ncclAllReduce", &a.all_reduce) || !Resolve(lib, "ncclCommDestroy", &a.comm_destroy) ||
        !Resolve(lib, "ncclGetErrorString", &a.get_error_string)) {
      a = NcclApi();
      a.error = "libnccl.so.2 lacks an NCCL 2 function this build calls";
    }
    return a;
  }();
  return api;
}

Status NcclStatus(NcclResult r, const char* what) {
  if (r == kNcclSuccess) return Status::Ok();
  return Status::Internal(std::string(what) + ": " + Api().get_error_string(r));
}

Status Loaded() {
  return Api().error.empty() ? Status::Ok() : Status::Unavailable(Api().error);
}

}  // namespace

StatusOr<NcclId> NcclCommunicator::NewId() {
  LLMSERVE_RETURN_IF_ERROR(Loaded());
  NcclId id;
  LLMSERVE_RETURN_IF_ERROR(NcclStatus(Api().get_unique_id(&id), "ncclGetUniqueId"));
  return id;
}

StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(int rank, int world_size, const NcclId& id) {
  LLMSERVE_RETURN_IF_ERROR(Loaded());
  if (world_size < 1 || rank < 0 || rank >= world_size)
    return Status::InvalidArgument("NCCL: rank " + std::to_string(rank) + " of " + std::to_string(world_size));
  std::unique_ptr<NcclCommunicator> c(new NcclCommunicator());
  LLMSERVE_RETURN_IF_ERROR(NcclStatus(Api().comm_init_rank(&c->comm_, world_size, id, rank), "ncclCommInitRank"));
  c->rank_ = rank;
  c->world_size_ = world_size;
  return c;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) Api().comm_destroy(comm_);
}

Status NcclCommunicator::AllReduceSum(float* data, size_t n, cudaStream_t stream) {
  if (n == 0) return Status::Ok();
  return NcclStatus(Api().all_reduce(data, data, n, kNcclFloat32, kNcclSum, comm_, stream), "ncclAllReduce");
}

}  // namespace llmserve::kernels::cuda
