// One bot session: the Play stream, every match the referee gives it, and rejoining after a
// stream that dropped.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "arena/v1/referee.grpc.pb.h"

namespace arena_bot {

// What trying again cannot mend: the bot exits with this message (code 2).
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when a status message speaks of TLS: a handshake that failed is not retried.
bool mentions_tls(const std::string& message);

// The status code's name as the referee's docs write it (UNAVAILABLE, ALREADY_EXISTS, ...).
std::string code_name(grpc::StatusCode code);

class Session {
 public:
  // reconnect_s: how long a referee that went away is tried again after a drop, beyond the
  // rejoin grace its Welcome gives ($ARENA_RECONNECT_S; 0 for a bot the referee started).
  Session(std::shared_ptr<grpc::Channel> channel, std::string token, double reconnect_s);

  // Plays until the referee ends the session and returns SessionEnd's reason; throws Failure.
  std::string play();

  int matches = 0;
  int decisions = 0;
  int events = 0;

 private:
  enum class Ending { kSessionEnd, kDropped };
  // One stream: Hello, then every message until SessionEnd (kSessionEnd) or a status that
  // trying again may mend (kDropped, with why in dropped_); throws Failure otherwise.
  Ending stream();
  Ending verdict(const grpc::Status& status);
  bool handle(grpc::ClientReaderWriter<arena::v1::PlayRequest, arena::v1::PlayResponse>& call,
              const arena::v1::PlayResponse& response);
  double backoff_s(int attempt, double cap_s);

  std::unique_ptr<arena::v1::RefereeService::Stub> stub_;
  std::string token_;
  double reconnect_s_;
  // How long the referee lets this session rejoin: its Welcome says; until one has come, the
  // default grace of tournaments and ladders (the Python SDK's GRACE_BEFORE_WELCOME_S).
  double grace_s_ = 10;
  bool welcomed_ = false;   // the current stream was let in
  bool rejoining_ = false;  // a stream of this session was let in and then dropped
  double unknown_since_ = -1;  // first "unknown token" after a drop, on the monotonic clock
  std::string end_reason_;
  std::string dropped_;
  std::mt19937 rng_;
};

}  // namespace arena_bot
