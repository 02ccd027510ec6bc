#include "session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>
#include <utility>

#include "rules.h"

namespace arena_bot {
namespace {

using arena::v1::PlayRequest;
using arena::v1::PlayResponse;

constexpr double REJOIN_S = 30;           // never rejoin quickly for longer than this
constexpr double REJOIN_CAP_S = 1;        // within the grace: a waiting decision's clock runs
constexpr double RECONNECT_CAP_S = 10;    // past it: a referee that restarts takes a while
constexpr double UNKNOWN_AFTER_DROP_S = 5;  // a ladder that just started knows no token yet

double now_s() {
  using std::chrono::duration;
  return duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool mentions_tls(const std::string& message) {
  static const std::regex tls("ssl|tls|handshake|certificate", std::regex::icase);
  return std::regex_search(message, tls);
}

std::string code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "code " + std::to_string(static_cast<int>(code));
  }
}

Session::Session(std::shared_ptr<grpc::Channel> channel, std::string token, double reconnect_s)
    : stub_(arena::v1::RefereeService::NewStub(channel)),
      token_(std::move(token)),
      reconnect_s_(reconnect_s),
      rng_(std::random_device{}()) {}

std::string Session::play() {
  double lost_at = -1;
  int attempt = 0;
  for (;;) {
    if (stream() == Ending::kSessionEnd) return end_reason_;
    const double now = now_s();
    if (welcomed_ || lost_at < 0) {  // a stream that had joined dropped: the clock starts over
      lost_at = now;
      attempt = 0;
    }
    rejoining_ = true;
    const double away_s = now - lost_at;
    const double rejoin_s = std::min(REJOIN_S, grace_s_);
    const double limit_s = std::max(rejoin_s, reconnect_s_);
    if (away_s >= limit_s) {
      char within[32];
      std::snprintf(within, sizeof within, "%g", limit_s);
      throw Failure("the connection to the referee dropped (" + dropped_ +
                    ") and could not be joined again within " + within + " s");
    }
    const double cap_s = away_s < rejoin_s ? REJOIN_CAP_S : RECONNECT_CAP_S;
    const double wait_s = std::min(backoff_s(attempt++, cap_s), limit_s - away_s);
    std::fprintf(stderr, "cpp-bot: the connection dropped (%s): rejoining\n", dropped_.c_str());
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  }
}

// Doubling from 0.2 s up to cap_s, each wait drawn from its upper half so that bots cut off
// together do not knock together.
double Session::backoff_s(int attempt, double cap_s) {
  const double full = std::min(cap_s, 0.2 * static_cast<double>(1 << std::min(attempt, 16)));
  return full * std::uniform_real_distribution<double>(0.5, 1.0)(rng_);
}

Session::Ending Session::stream() {
  grpc::ClientContext context;
  auto call = stub_->Play(&context);
  welcomed_ = false;
  end_reason_.clear();
  bool ended = false;
  PlayRequest hello;
  hello.mutable_hello()->set_token(token_);
  hello.mutable_hello()->set_bot_name("cpp-rules");
  hello.mutable_hello()->set_sdk_version("cpp-0.1.0");
  if (call->Write(hello)) {
    PlayResponse response;
    while (call->Read(&response)) {
      if (!ended && !handle(*call, response)) {
        ended = true;
        call->WritesDone();  // the referee closes its side after SessionEnd
      }
    }
  }
  const grpc::Status status = call->Finish();
  if (ended) return Ending::kSessionEnd;
  return verdict(status);
}

// What a stream's status means: kDropped to try again, or the Failure to exit with.
Session::Ending Session::verdict(const grpc::Status& status) {
  const grpc::StatusCode code = status.error_code();
  const std::string said = code_name(code) + ": " + status.error_message();
  dropped_ = said;
  if (code == grpc::StatusCode::UNAVAILABLE && mentions_tls(status.error_message())) {
    throw Failure("the TLS handshake with the referee failed: " + said);
  }
  const bool trying = grace_s_ > 0 || reconnect_s_ > 0;
  if (code == grpc::StatusCode::UNAVAILABLE && trying) return Ending::kDropped;
  // The referee has not yet seen the old stream drop (a cut connection can look open).
  if (code == grpc::StatusCode::ALREADY_EXISTS && rejoining_) return Ending::kDropped;
  if (code == grpc::StatusCode::PERMISSION_DENIED && status.error_message() == "unknown token" &&
      rejoining_) {
    if (unknown_since_ < 0) unknown_since_ = now_s();
    if (now_s() - unknown_since_ < UNKNOWN_AFTER_DROP_S) return Ending::kDropped;
  }
  if (code == grpc::StatusCode::ABORTED) {
    throw Failure("another stream with this bot's token took its seat (" + said +
                  "): is a second process running with the same token?");
  }
  if (code == grpc::StatusCode::OK) {
    throw Failure("the referee closed the stream without a SessionEnd");
  }
  throw Failure("the referee ended the session: " + said);
}

// Returns false at SessionEnd, true while the session goes on.
bool Session::handle(grpc::ClientReaderWriter<PlayRequest, PlayResponse>& call,
                     const PlayResponse& response) {
  switch (response.message_case()) {
    case PlayResponse::kWelcome:
      welcomed_ = true;
      unknown_since_ = -1;
      grace_s_ = response.welcome().rejoin_grace_ms() / 1000.0;
      return true;
    case PlayResponse::kDecisionRequest: {
      const auto& request = response.decision_request();
      events += request.events_size();  // what the seat saw happen, oldest first
      if (request.legal_actions_size() == 0) return true;  // never sent: nothing to choose from
      const int chosen = choose(request);
      PlayRequest answer;
      auto* decision = answer.mutable_decision();
      decision->set_match_id(request.match_id());
      decision->set_decision_id(request.decision_id());
      // set_index(0) still sets the oneof: the referee reads "index 0", not "no choice".
      decision->set_index(request.legal_actions(chosen).index());
      ++decisions;
      call.Write(answer);  // a failed write shows as the stream's status, read next
      return true;
    }
    case PlayResponse::kMatchEnd:
      events += response.match_end().events_size();
      ++matches;
      return true;
    case PlayResponse::kNotice:
      std::fprintf(stderr, "cpp-bot: referee notice: %s\n", response.notice().message().c_str());
      return true;
    case PlayResponse::kSessionEnd:
      end_reason_ = response.session_end().reason();
      return false;
    default:
      return true;  // MatchStart, or a message this build does not know
  }
}

}  // namespace arena_bot
