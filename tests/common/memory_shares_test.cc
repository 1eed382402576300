// Engines sharing a runtime directory count each other's memory shares; the
// shares of processes that are gone do not count.
#include "common/process/memory_shares.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace llmserve::common {
namespace {

namespace fs = std::filesystem;

class MemorySharesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/llmserve-shares-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(MemorySharesTest, CountsLiveSharesAndAtLeastOne) {
  EXPECT_EQ(CountMemoryShares(dir_), 1u);  // nobody holds one: the caller gets the whole host
  std::ofstream(dir_ + "/unrelated-file") << "x";
  auto a = MemoryShare::Take(dir_);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(CountMemoryShares(dir_), 1u);
  auto b = MemoryShare::Take(dir_);
  ASSERT_TRUE(b.ok());
  EXPECT_NE((*a)->path(), (*b)->path());
  EXPECT_EQ(CountMemoryShares(dir_), 2u);
  auto c = MemoryShare::Take(dir_);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(CountMemoryShares(dir_), 3u);
  c->reset();  // given back
  EXPECT_EQ(CountMemoryShares(dir_), 2u);
  EXPECT_TRUE(fs::exists(dir_ + "/unrelated-file"));
}

TEST_F(MemorySharesTest, SharesOfExitedProcessesAreDroppedAndRemoved) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // reaped: the pid names no process now
  const std::string stale = dir_ + "/llmserve-memory-share-" + std::to_string(child) + "-0";
  std::ofstream(stale).put('\n');
  auto mine = MemoryShare::Take(dir_);
  ASSERT_TRUE(mine.ok());
  auto other = MemoryShare::Take(dir_);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(CountMemoryShares(dir_), 2u);
  EXPECT_FALSE(fs::exists(stale));
}

TEST_F(MemorySharesTest, AnUnwritableDirectoryIsAnError) {
  auto share = MemoryShare::Take(dir_ + "/missing");
  ASSERT_FALSE(share.ok());
  EXPECT_NE(share.status().message().find("cannot create the memory share"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::common
