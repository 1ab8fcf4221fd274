// Internal header, not API: the `scoring:` and `report:` sections of a scenario file
// (docs/scenarios.md), read with located errors like the rest of the scenario.
#pragma once

#include <engine/scenario.h>

#include "yaml_reader.h"

namespace sim::engine::detail {

/// Reads `scoring:` of `scenario`, whose scene and expectations are already read.
ScoringDef readScoring(Context& ctx, const YAML::Node& node, const std::string& path,
                       const Scenario& scenario);

/// Reads `report:`; every signal must resolve on the scenario's scene.
ReportDef readReport(Context& ctx, const YAML::Node& node, const std::string& path,
                     const Scenario& scenario);

}  // namespace sim::engine::detail
