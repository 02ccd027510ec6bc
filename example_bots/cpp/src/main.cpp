// An arena bot in C++, written from the .proto files and docs/protocol.md alone: it joins the
// referee named by ARENA_ADDRESS with ARENA_TOKEN and plays every game with a simple rule per
// game (rules.cpp).
//
//   ARENA_ADDRESS         host:port, or unix:/path/to/socket              (required)
//   ARENA_TOKEN           the seat token the referee issued               (required)
//   ARENA_ROOT_CERT       a PEM file: connect over TLS, trusting this root only
//   ARENA_JOIN_TIMEOUT_S  how long to wait for the referee to listen (default 30)
//   ARENA_RECONNECT_S     how long to try again after a drop, beyond the rejoin grace (600)
//   ARENA_KEEPALIVE_S     ping after this long with nothing received (2; 0: never)
//
// Exit code 0 when the referee ends the session (SessionEnd), 2 otherwise; what went wrong is
// one line on stderr, which `arena play` keeps in the bot's log.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "session.h"

namespace {

using arena_bot::Failure;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// A duration in seconds from the environment, else fallback; 0 allowed only when zero_ok.
double seconds_from_env(const char* name, double fallback, bool zero_ok) {
  const std::string text = env(name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  const bool whole = end != nullptr && *end == '\0';
  if (!whole || !std::isfinite(seconds) || seconds < 0 || (seconds == 0 && !zero_ok)) {
    const char* what = zero_ok ? "a number of seconds, 0 or more" : "a positive number of seconds";
    throw Failure(std::string(name) + " must be " + what + ", not '" + text + "'");
  }
  return seconds;
}

std::shared_ptr<grpc::ChannelCredentials> credentials(const std::string& root_cert) {
  if (root_cert.empty()) return grpc::InsecureChannelCredentials();
  std::ifstream file(root_cert);
  std::stringstream pem;
  pem << file.rdbuf();
  if (!file || pem.str().empty()) {
    throw Failure("cannot read the root certificate " + root_cert + " (ARENA_ROOT_CERT)");
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pem.str();
  return grpc::SslCredentials(options);
}

grpc::ChannelArguments channel_arguments(double keepalive_s) {
  grpc::ChannelArguments arguments;
  // A bot started before its referee knocks again within a second, not grpc's default of minutes.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  if (keepalive_s > 0) {
    // Pings find a connection cut on the way dead: the stream ends UNAVAILABLE and is rejoined.
    const int every_ms = std::max(1, static_cast<int>(std::lround(keepalive_s * 1000)));
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, every_ms);
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, every_ms);
    arguments.SetInt("grpc.http2.ping_timeout_ms", every_ms);  // newer grpc core reads this one
    arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
    arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  }
  return arguments;
}

// Waits until the channel is connected. Over TLS, a referee whose certificate the root does not
// sign leaves the channel failing: one call then says why, and the bot stops at once.
void wait_for_referee(const std::shared_ptr<grpc::Channel>& channel, const std::string& address,
                      double join_timeout_s, bool tls) {
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(join_timeout_s));
  for (;;) {
    const auto next_second = std::chrono::system_clock::now() + std::chrono::seconds(1);
    if (channel->WaitForConnected(std::min(deadline, next_second))) return;
    if (std::chrono::system_clock::now() >= deadline) break;
    if (tls && channel->GetState(false) == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
      arena::v1::ListGamesResponse games;
      const grpc::Status status = arena::v1::RefereeService::NewStub(channel)->ListGames(
          &context, arena::v1::ListGamesRequest(), &games);
      if (!status.ok() && arena_bot::mentions_tls(status.error_message())) {
        throw Failure("the TLS handshake with the referee failed: " +
                      arena_bot::code_name(status.error_code()) + ": " + status.error_message());
      }
    }
  }
  char within[32];
  std::snprintf(within, sizeof within, "%g", join_timeout_s);
  const std::string hint = tls ? "is it serving TLS with a certificate this root signed?"
                               : "if it serves TLS, give its root certificate in ARENA_ROOT_CERT";
  throw Failure("could not reach the referee at " + address + " within " + within + " s (" +
                hint + ")");
}

int run() {
  const std::string address = env("ARENA_ADDRESS");
  const std::string token = env("ARENA_TOKEN");
  if (address.empty() || token.empty()) throw Failure("set ARENA_ADDRESS and ARENA_TOKEN");
  const std::string root_cert = env("ARENA_ROOT_CERT");
  const double join_timeout_s = seconds_from_env("ARENA_JOIN_TIMEOUT_S", 30, false);
  const double reconnect_s = seconds_from_env("ARENA_RECONNECT_S", 600, true);
  const double keepalive_s = seconds_from_env("ARENA_KEEPALIVE_S", 2, true);
  auto channel = grpc::CreateCustomChannel(address, credentials(root_cert),
                                           channel_arguments(keepalive_s));
  wait_for_referee(channel, address, join_timeout_s, !root_cert.empty());
  arena_bot::Session session(channel, token, reconnect_s);
  const std::string reason = session.play();
  std::fprintf(stderr, "cpp-bot: session over after %d matches, %d decisions, %d events (%s)\n",
               session.matches, session.decisions, session.events, reason.c_str());
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const Failure& failure) {
    std::fprintf(stderr, "cpp-bot: %s\n", failure.what());
    return 2;
  }
}
