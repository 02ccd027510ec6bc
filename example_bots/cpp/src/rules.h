// One simple rule per game: which legal action to take, read from the observation and the
// actions' typed forms (never a fixed position in the list).
#pragma once

#include "arena/v1/referee.pb.h"

namespace arena_bot {

// The position in request.legal_actions of the action to take (legal_actions is never empty).
int choose(const arena::v1::DecisionRequest& request);

}  // namespace arena_bot
