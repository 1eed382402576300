#include "deploy/hf_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace llmserve::deploy::hf_cache_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A hub cache in a temporary directory, laid out as huggingface_hub writes it.
class TempHubCache {
 public:
  TempHubCache() {
    std::string tmpl = (fs::temp_directory_path() / "llmserve_hf_cache_XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    hub_ = root_ + "/hub";
  }
  ~TempHubCache() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  // Adds a snapshot `hash` of `folder` (models--org--name) and, if `ref` is set, refs/<ref> naming it.
  std::string AddSnapshot(const std::string& folder, const std::string& hash, const std::string& ref) {
    const fs::path repo = fs::path(hub_) / folder;
    fs::create_directories(repo / "snapshots" / hash);
    std::ofstream(repo / "snapshots" / hash / "config.json") << "{}";
    if (!ref.empty()) {
      fs::create_directories(repo / "refs");
      std::ofstream(repo / "refs" / ref) << hash << "\n";
    }
    return (repo / "snapshots" / hash).string();
  }
  const std::string& root() const { return root_; }
  const std::string& hub() const { return hub_; }

 private:
  std::string root_, hub_;
};

TEST(HfCache, MainRefPicksTheSnapshot) {
  TempHubCache hub;
  const std::string main = hub.AddSnapshot("models--Qwen--Qwen3-0.6B", "abc123", "main");
  auto dir = FindHfSnapshot("Qwen/Qwen3-0.6B", "", hub.hub());
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, main);
}

TEST(HfCache, RevisionIsARefOrACommitHash) {
  TempHubCache hub;
  hub.AddSnapshot("models--Qwen--Qwen3-0.6B", "abc123", "main");
  const std::string tagged = hub.AddSnapshot("models--Qwen--Qwen3-0.6B", "def456", "v1.0");
  const std::string unnamed = hub.AddSnapshot("models--Qwen--Qwen3-0.6B", "0123abcd", "");
  EXPECT_EQ(FindHfSnapshot("Qwen/Qwen3-0.6B", "v1.0", hub.hub()).value(), tagged);
  EXPECT_EQ(FindHfSnapshot("Qwen/Qwen3-0.6B", "0123abcd", hub.hub()).value(), unnamed);
  auto missing = FindHfSnapshot("Qwen/Qwen3-0.6B", "v2", hub.hub());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("revision v2"));
  EXPECT_THAT(missing.status().message(), HasSubstr("--revision v2"));
}

TEST(HfCache, MissingModelNamesThePathsAndSaysNothingIsDownloaded) {
  TempHubCache hub;
  auto dir = FindHfSnapshot("Other/Model", "", hub.hub());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(dir.status().message(), HasSubstr(hub.hub() + "/models--Other--Model/refs/main"));
  EXPECT_THAT(dir.status().message(), HasSubstr(hub.hub() + "/models--Other--Model/snapshots/main"));
  EXPECT_THAT(dir.status().message(), HasSubstr("llmserve does not download models"));
}

TEST(HfCache, RefToAMissingSnapshotIsAnError) {
  TempHubCache hub;
  const std::string snapshot = hub.AddSnapshot("models--a--b", "abc", "main");
  fs::remove_all(snapshot);
  auto dir = FindHfSnapshot("a/b", "", hub.hub());
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.status().message(), HasSubstr("names commit 'abc'"));
}

TEST(HfCache, HubDirectoryFollowsHuggingFaceHubsOrder) {
  HfCacheEnvironment env{"/hub-cache", "/hf-home", "/xdg", "/home/u"};
  EXPECT_EQ(env.HubDirectory(), "/hub-cache");
  env.hf_hub_cache.clear();
  EXPECT_EQ(env.HubDirectory(), "/hf-home/hub");
  env.hf_home.clear();
  EXPECT_EQ(env.HubDirectory(), "/xdg/huggingface/hub");
  env.xdg_cache_home.clear();
  EXPECT_EQ(env.HubDirectory(), "/home/u/.cache/huggingface/hub");
}

TEST(HfCache, WhatLooksLikeAnId) {
  EXPECT_TRUE(LooksLikeHfId("Qwen/Qwen3-0.6B"));
  EXPECT_FALSE(LooksLikeHfId("/models/qwen"));
  EXPECT_FALSE(LooksLikeHfId("models/qwen/v1"));
  EXPECT_FALSE(LooksLikeHfId("qwen"));
  EXPECT_FALSE(LooksLikeHfId("./qwen"));
  EXPECT_FALSE(LooksLikeHfId("~/qwen"));
  EXPECT_FALSE(LooksLikeHfId("qwen/"));
}

TEST(HfCache, ResolveModelPrefersAnExistingPath) {
  TempHubCache hub;
  const std::string snapshot = hub.AddSnapshot("models--Qwen--Qwen3-0.6B", "abc123", "main");
  HfCacheEnvironment env{hub.hub(), "", "", ""};
  auto local = ResolveModel(hub.root(), "", env);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->dir, hub.root());
  EXPECT_EQ(local->hf_id, "");
  auto by_id = ResolveModel("Qwen/Qwen3-0.6B", "", env);
  ASSERT_TRUE(by_id.ok()) << by_id.status().message();
  EXPECT_EQ(by_id->dir, snapshot);
  EXPECT_EQ(by_id->hf_id, "Qwen/Qwen3-0.6B");
  // Found through $HF_HOME/hub as well.
  auto via_home = ResolveModel("Qwen/Qwen3-0.6B", "", HfCacheEnvironment{"", hub.root(), "", ""});
  ASSERT_TRUE(via_home.ok()) << via_home.status().message();
  EXPECT_EQ(via_home->dir, snapshot);
  auto missing_path = ResolveModel("/no/such/dir", "", env);  // not an id: the caller reports it
  ASSERT_TRUE(missing_path.ok());
  EXPECT_EQ(missing_path->dir, "/no/such/dir");
  EXPECT_EQ(missing_path->hf_id, "");
  EXPECT_THAT(ResolveModel("No/Such", "", env).status().message(), HasSubstr("llmserve does not download"));
}

}  // namespace llmserve::deploy::hf_cache_test
