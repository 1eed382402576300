#include "worker/kv_connector/kv_connector_step.h"

namespace llmserve::worker {

Status BeginKVConnectorStep(KVConnectorWorker& connector, const proto::SchedulerOutput& step) {
  LLMSERVE_RETURN_IF_ERROR(connector.BindConnectorMetadata(step.kv_connector_metadata));
  connector.StartLoadKv();
  return Status::Ok();
}

void FinishKVConnectorStep(KVConnectorWorker& connector, const proto::SchedulerOutput& step,
                           proto::ModelRunnerOutput* out) {
  connector.WaitForSave();
  FinishedTransfers finished = connector.GetFinished(step.finished_req_ids);
  proto::KVConnectorOutput report;
  report.finished_sending = std::move(finished.sending);
  report.finished_recving = std::move(finished.recving);
  report.invalid_block_ids = connector.GetBlockIdsWithLoadErrors();
  connector.ClearConnectorMetadata();
  if (!report.empty()) out->kv_connector_output = std::move(report);
}

}  // namespace llmserve::worker
