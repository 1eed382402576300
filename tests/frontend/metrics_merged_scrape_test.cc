// API servers sharing a snapshot directory: each one's file replaced whole,
// other processes' files read back with whether they still run, and
// MergedScrape's promise that what any scrape showed of a server is already
// on disk, so a later scrape of another server never shows less. Every
// publication here is an explicit call (the publishing threads wait an hour).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "frontend/metrics/merged_scrape.h"
#include "frontend/metrics/snapshot_codec.h"
#include "frontend/metrics/snapshot_directory.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;
using testing::PromScrape;

constexpr std::chrono::hours kNoTimer{1};

class SnapshotDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("llmserve-metrics-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SnapshotDirectory> Open(int32_t index) {
    auto d = SnapshotDirectory::Open(dir_.string(), index);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? std::move(d).value() : nullptr;
  }
  void WriteFile(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  std::filesystem::path dir_;
};

double Success(const std::string& scrape) {
  PromScrape s = ParsePrometheusText(scrape);
  EXPECT_EQ(s.error, "");
  return s.Value("vllm:request_success_total", {{"engine", "0"}, {"finished_reason", "stop"}}).value_or(-1);
}

void Finish(FrontendMetrics& m) {
  FinishedRequest r;
  r.e2e_latency_s = 0.5;
  m.RecordFinished(0, r);
}

TEST_F(SnapshotDirTest, ReadsTheOthersWholeAndSkipsWhatIsNotASnapshot) {
  auto a = Open(0), b = Open(1);
  ASSERT_TRUE(a && b);
  FamilySnapshot f{"requests", "help", MetricType::kCounter, {}, {}, GaugeMerge::kFreshest, {}};
  f.series.push_back(SeriesSnapshot{{}, 3.0, {}, 0.0, {}});
  ASSERT_TRUE(b->Publish({f}).ok());
  f.series[0].value = 4.0;
  ASSERT_TRUE(b->Publish({f}).ok());  // replaces the first
  ASSERT_TRUE(a->Publish({}).ok());
  WriteFile("api-server-7-1.json", "not json");  // logged and skipped
  WriteFile(".api-server-1-2.json.tmp", "half written");
  WriteFile("notes.txt", "hello");
  const std::vector<ServerSnapshot> others = a->ReadOthers();
  ASSERT_EQ(others.size(), 1u) << "b's file only; a's own is not another's";
  EXPECT_EQ(others[0].pid, ::getpid());
  EXPECT_TRUE(others[0].running);
  ASSERT_EQ(others[0].families.size(), 1u);
  EXPECT_EQ(others[0].families[0].series[0].value, 4.0);
  EXPECT_EQ(b->ReadOthers().size(), 1u);
}

TEST_F(SnapshotDirTest, TellsExitedProcessesApart) {
  auto a = Open(0);
  ASSERT_TRUE(a);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  WriteFile("api-server-1-" + std::to_string(child) + ".json", EncodeSnapshot({child, 0}, {}));
  // This very pid, but started at another time: the pid was reused, the server is gone.
  const uint64_t my_start = ProcessStartTicks(::getpid());
  ASSERT_GT(my_start, 0u);
  WriteFile("api-server-2-1.json", EncodeSnapshot({::getpid(), my_start + 1}, {}));
  WriteFile("api-server-3-1.json", EncodeSnapshot({::getpid(), my_start}, {}));
  std::map<int64_t, std::vector<bool>> running;
  for (const ServerSnapshot& s : a->ReadOthers()) running[s.pid].push_back(s.running);
  EXPECT_EQ(running[child], std::vector<bool>{false});
  EXPECT_EQ(running[::getpid()], (std::vector<bool>{false, true}));  // files in name order: 2 then 3
}

TEST_F(SnapshotDirTest, AScrapeShowsTheOtherServersPublishedValues) {
  FrontendMetrics ma({"tiny", {0}}), mb({"tiny", {0}});
  MergedScrape a(&ma, Open(0), kNoTimer), b(&mb, Open(1), kNoTimer);
  Finish(mb);
  Finish(mb);
  Finish(ma);
  EXPECT_EQ(Success(a.Render()), 1) << "b has not published since its requests";
  b.PublishIfChanged();
  EXPECT_EQ(Success(a.Render()), 3);
  EXPECT_EQ(Success(b.Render()), 3);
}

TEST_F(SnapshotDirTest, WhatAScrapeShowedNoLaterScrapeUndercuts) {
  FrontendMetrics ma({"tiny", {0}}), mb({"tiny", {0}});
  MergedScrape a(&ma, Open(0), kNoTimer), b(&mb, Open(1), kNoTimer);
  Finish(ma);
  Finish(ma);
  EXPECT_EQ(Success(a.Render()), 2);
  EXPECT_EQ(Success(b.Render()), 2) << "a published what its scrape showed before answering";
}

TEST_F(SnapshotDirTest, AStoppedServersCountsStay) {
  FrontendMetrics ma({"tiny", {0}});
  auto mb = std::make_unique<FrontendMetrics>(FrontendMetricsConfig{"tiny", {0}});
  MergedScrape a(&ma, Open(0), kNoTimer);
  auto b = std::make_unique<MergedScrape>(mb.get(), Open(1), kNoTimer);
  Finish(*mb);
  b.reset();  // the server stops: its last values go to its file
  mb.reset();
  EXPECT_EQ(Success(a.Render()), 1);
}

TEST_F(SnapshotDirTest, UnchangedValuesAreNotRepublished) {
  FrontendMetrics ma({"tiny", {0}}), mb({"tiny", {0}});
  auto dir_b = Open(1);
  ASSERT_TRUE(dir_b);
  const std::filesystem::path file = dir_b->path();
  MergedScrape a(&ma, Open(0), kNoTimer, kNoTimer), b(&mb, std::move(dir_b), kNoTimer, kNoTimer);
  const auto written = std::filesystem::last_write_time(file);
  std::filesystem::remove(file);
  b.PublishIfChanged();
  EXPECT_FALSE(std::filesystem::exists(file)) << "nothing changed";
  Finish(mb);
  b.PublishIfChanged();
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_GE(std::filesystem::last_write_time(file), written);
  EXPECT_EQ(Success(a.Render()), 1);
}

TEST_F(SnapshotDirTest, OpenFailsOnAFile) {
  std::filesystem::create_directories(dir_);
  WriteFile("plain", "x");
  EXPECT_FALSE(SnapshotDirectory::Open((dir_ / "plain").string(), 0).ok());
}

}  // namespace
}  // namespace llmserve::frontend::metrics
