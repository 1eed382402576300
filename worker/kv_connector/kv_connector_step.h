#pragma once
// The model runner's connector calls around one step (vLLM's
// KVConnectorModelRunnerMixin): what happens before the forward, and the
// report that goes back in ModelRunnerOutput.kv_connector_output after it.

#include "base/status.h"
#include "proto/model_runner_output.h"
#include "proto/scheduler_output.h"
#include "worker/kv_connector/kv_connector_worker.h"

namespace llmserve::worker {

// Binds the step's metadata and starts its loads (before the forward).
Status BeginKVConnectorStep(KVConnectorWorker& connector, const proto::SchedulerOutput& step);

// Waits for the step's saves, collects finished transfers and failed loads
// into out->kv_connector_output (left unset when there is no news) and
// clears the metadata (after the forward, or instead of it when the step
// computes nothing).
void FinishKVConnectorStep(KVConnectorWorker& connector, const proto::SchedulerOutput& step,
                           proto::ModelRunnerOutput* out);

}  // namespace llmserve::worker
