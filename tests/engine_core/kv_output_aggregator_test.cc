#include "engine_core/kv_connector/kv_output_aggregator.h"

#include <gtest/gtest.h>

namespace llmserve::engine_core {
namespace kv_output_aggregator_test {

using Reports = std::vector<std::optional<proto::KVConnectorOutput>>;

TEST(KVOutputAggregator, ATransferIsFinishedOnceEveryWorkerReportedIt) {
  KVOutputAggregator merge(2);
  EXPECT_FALSE(merge.Merge(Reports{std::nullopt, std::nullopt}).has_value());
  // Worker 0 is done sending "a" and receiving "b"; worker 1 not yet.
  EXPECT_FALSE(merge.Merge(Reports{proto::KVConnectorOutput{{"a"}, {"b"}, {}}, std::nullopt}).has_value());
  // Worker 1 catches up on "a" a step later, and both finish "c" at once.
  auto merged =
      merge.Merge(Reports{proto::KVConnectorOutput{{"c"}, {}, {}}, proto::KVConnectorOutput{{"a", "c"}, {}, {}}});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->finished_sending, (std::vector<std::string>{"a", "c"}));  // in the order they completed
  EXPECT_TRUE(merged->finished_recving.empty());
  merged = merge.Merge(Reports{std::nullopt, proto::KVConnectorOutput{{}, {"b"}, {}}});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->finished_recving, std::vector<std::string>{"b"});
}

TEST(KVOutputAggregator, ABlockIsInvalidIfAnyWorkerFailedToLoadIt) {
  KVOutputAggregator merge(3);
  auto merged = merge.Merge(Reports{proto::KVConnectorOutput{{}, {}, {7, 3}}, std::nullopt,
                                    proto::KVConnectorOutput{{}, {}, {3, 9}}});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->invalid_block_ids, (std::vector<int32_t>{3, 7, 9}));
  EXPECT_TRUE(merged->finished_sending.empty());
}

}  // namespace kv_output_aggregator_test
}  // namespace llmserve::engine_core
