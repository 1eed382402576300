#include "worker/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace llmserve::worker {

size_t TensorToWrite::num_bytes() const {
  size_t n = dtype == "F32" || dtype == "I32" ? 4 : dtype == "I8" || dtype == "F8_E4M3" ? 1 : 2;
  for (size_t d : shape) n *= d;
  return n;
}

namespace {

Status WriteOne(const std::string& path, const std::vector<const TensorToWrite*>& tensors) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  size_t offset = 0;
  for (const auto* t : tensors) {
    header[t->name] = {{"dtype", t->dtype}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->num_bytes()}}};
    offset += t->num_bytes();
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Unavailable(path + ": cannot create");
  const uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  std::vector<uint8_t> buf;
  for (const auto* t : tensors) {
    buf.assign(t->num_bytes(), 0);
    t->fill(buf.data());
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  }
  out.close();
  if (!out) return Status::Unavailable(path + ": write failed");
  return Status::Ok();
}

}  // namespace

Status WriteSafetensorsFile(const std::string& path, const std::vector<TensorToWrite>& tensors) {
  std::vector<const TensorToWrite*> all;
  for (const auto& t : tensors) all.push_back(&t);
  return WriteOne(path, all);
}

Status WriteSafetensors(const std::string& dir, const std::vector<TensorToWrite>& tensors, size_t num_shards) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Unavailable(dir + ": " + ec.message());
  if (num_shards <= 1) {
    std::vector<const TensorToWrite*> all;
    for (const auto& t : tensors) all.push_back(&t);
    return WriteOne((fs::path(dir) / "model.safetensors").string(), all);
  }
  size_t total = 0;
  for (const auto& t : tensors) total += t.num_bytes();
  const size_t target = (total + num_shards - 1) / num_shards;
  std::vector<std::vector<const TensorToWrite*>> shards(1);
  size_t in_shard = 0;
  for (const auto& t : tensors) {
    if (in_shard >= target && shards.size() < num_shards) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&t);
    in_shard += t.num_bytes();
  }
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total}};
  nlohmann::ordered_json map = nlohmann::ordered_json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    for (const auto* t : shards[i]) map[t->name] = name;
    LLMSERVE_RETURN_IF_ERROR(WriteOne((fs::path(dir) / name).string(), shards[i]));
  }
  index["weight_map"] = map;
  std::ofstream out(fs::path(dir) / "model.safetensors.index.json");
  out << index.dump(2) << "\n";
  if (!out) return Status::Unavailable(dir + ": cannot write model.safetensors.index.json");
  return Status::Ok();
}

}  // namespace llmserve::worker
