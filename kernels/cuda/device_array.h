#pragma once
// DeviceArray<T>: an owned, typed cudaMalloc allocation (freed on
// destruction; move-only), with checked uploads and downloads.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "base/status_or.h"
#include "kernels/cuda/cuda_check.h"

namespace llmserve::kernels::cuda {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  ~DeviceArray() { Free(); }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      Free();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // Holds exactly n elements afterwards (uninitialised; the old contents are dropped).
  Status Resize(size_t n) {
    if (n == size_) return Status::Ok();
    Free();
    if (n == 0) return Status::Ok();
    const cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T));
    if (err != cudaSuccess) {
      cudaGetLastError();
      data_ = nullptr;
      return Status::ResourceExhausted("cannot allocate " + std::to_string(n * sizeof(T)) +
                                       " bytes of GPU memory: " + cudaGetErrorString(err));
    }
    size_ = n;
    return Status::Ok();
  }
  // Holds at least n elements afterwards; contents are dropped when it grows.
  Status Reserve(size_t n) { return n <= size_ ? Status::Ok() : Resize(n); }

  // Copies n host elements into [offset, offset + n).
  Status Upload(const T* host, size_t n, size_t offset = 0) {
    if (offset + n > size_) return Status::InvalidArgument("DeviceArray upload past its end");
    return CudaStatus(cudaMemcpy(data_ + offset, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  Status Zero() { return CudaStatus(cudaMemset(data_, 0, size_ * sizeof(T)), "cudaMemset"); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }

 private:
  void Free() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace llmserve::kernels::cuda
