// Each game's rule scores every legal action and takes the best, the first on ties: the bot is
// deterministic. The rules are deliberately short; they show where a game's facts are found.
#include "rules.h"

#include <functional>

namespace arena_bot {
namespace {

using arena::v1::Card;
using arena::v1::DecisionRequest;
using arena::v1::LegalAction;

constexpr int UNKNOWN_RANK = 8;  // the middle of 2..14: a card nobody has seen

int best(const DecisionRequest& request, const std::function<int(const LegalAction&)>& score) {
  int chosen = 0;
  int top = 0;
  for (int i = 0; i < request.legal_actions_size(); ++i) {
    const int value = score(request.legal_actions(i));
    if (i == 0 || value > top) {
      chosen = i;
      top = value;
    }
  }
  return chosen;
}

// Opposing Force: claim what can be claimed; else play the card that joins a card of its suit or
// rank on our side of a position, the highest such; else the lowest card where we have least.
int opposing_force(const DecisionRequest& request) {
  const auto& obs = request.observation().opposing_force();
  const uint32_t seat = obs.seat();
  return best(request, [&](const LegalAction& legal) {
    const auto& action = legal.action().opposing_force();
    if (action.has_claim()) return 1000;
    if (!action.has_play()) return 0;  // pass: only when nothing else is legal
    const Card& card = action.play().card();
    const uint32_t position = action.play().position();
    int joins = 0;
    int ours = 0;
    if (position < static_cast<uint32_t>(obs.positions_size()) &&
        seat < static_cast<uint32_t>(obs.positions(position).sides_size())) {
      for (const Card& there : obs.positions(position).sides(seat).cards()) {
        ++ours;
        if (there.suit() == card.suit() || there.rank() == card.rank()) ++joins;
      }
    }
    if (joins > 0) return 500 + 20 * joins + static_cast<int>(card.rank());
    return 100 - 20 * ours - static_cast<int>(card.rank());
  });
}

// Capture the Commander: attack where our card beats theirs by the most (a card nobody has seen
// counts as a middle one), the commander (slot 13) first; in a war flip our highest known card.
int capture_the_commander(const DecisionRequest& request) {
  const auto& obs = request.observation().capture_the_commander();
  auto rank_at = [&](uint32_t seat, uint32_t slot) {
    if (seat >= static_cast<uint32_t>(obs.formations_size())) return UNKNOWN_RANK;
    const auto& slots = obs.formations(seat).slots();
    if (slot < 1 || slot > static_cast<uint32_t>(slots.size())) return UNKNOWN_RANK;
    const auto& found = slots[static_cast<int>(slot) - 1];
    return found.has_card() ? static_cast<int>(found.card().rank()) : UNKNOWN_RANK;
  };
  return best(request, [&](const LegalAction& legal) {
    const auto& action = legal.action().capture_the_commander();
    if (action.has_attack()) {
      const auto& attack = action.attack();
      const int edge = rank_at(obs.seat(), attack.slot()) -
                       rank_at(attack.defender(), attack.target_slot());
      return 100 + edge + (attack.target_slot() == 13 ? 5 : 0);
    }
    if (action.has_war_flip()) return rank_at(obs.seat(), action.war_flip().slot());
    return 0;  // a gift: only when there is no attack
  });
}

// Officers' Battle: kill with an ace, lay series, cycle low singles for bonus cards, draw from
// the discard pile when its top card is a high one, and end the battle only when nothing else.
int officers_battle(const DecisionRequest& request) {
  const auto& obs = request.observation().officers_battle();
  const int pile = obs.discard_pile_size();
  const bool good_top = pile > 0 && obs.discard_pile(pile - 1).rank() >= 10;
  return best(request, [&](const LegalAction& legal) {
    const auto& action = legal.action().officers_battle();
    const int rank = [&] {
      if (action.has_single()) return static_cast<int>(action.single().card().rank());
      if (action.has_add_to_series()) return static_cast<int>(action.add_to_series().card().rank());
      return 0;
    }();
    if (action.has_ace_kill()) return 100;
    if (action.has_finish_series()) return 90;
    if (action.has_add_to_series()) return 70 + rank;
    if (action.has_start_series()) return 65;
    if (action.has_kill_choice()) return action.kill_choice().take_pile() ? 55 : 60;
    if (action.has_single() && rank <= 7) return 50 - rank;
    if (action.has_draw()) {
      const bool from_pile =
          action.draw().source() == arena::v1::OFFICERS_BATTLE_SOURCE_DISCARD_PILE;
      return from_pile == good_top ? 45 : 35;
    }
    if (action.has_new_support() || action.has_retreat()) return 30;
    if (action.has_end_battle()) return 20;
    if (action.has_single()) return 15 - rank;
    return 10;  // no draw, pass
  });
}

// Orc Pit Fighting: answer an attack with defend when the hand holds more spades than clubs, else
// counterattack; take the turn when offered; otherwise play the highest card for its use.
int orc_pit_fighting(const DecisionRequest& request) {
  const auto& obs = request.observation().orc_pit_fighting();
  int spades = 0;
  int clubs = 0;
  for (const Card& card : obs.hand()) {
    if (card.suit() == arena::v1::SUIT_SPADES) ++spades;
    if (card.suit() == arena::v1::SUIT_CLUBS) ++clubs;
  }
  return best(request, [&](const LegalAction& legal) {
    const auto& action = legal.action().orc_pit_fighting();
    if (action.has_defend()) return spades > clubs ? 200 : 150;
    if (action.has_counterattack()) return spades > clubs ? 150 : 200;
    if (action.has_choose_turn()) return action.choose_turn().take() ? 100 : 50;
    if (action.has_play()) {
      const auto use = action.play().use();
      const int rank = static_cast<int>(action.play().card().rank());
      if (use == arena::v1::ORC_PIT_FIGHTING_USE_DISCARD) return 20 - rank;
      return 40 + rank;
    }
    return 30;  // pass, decline, done, keep the drawn card
  });
}

// Strato-Sphere: attack; prevent an attack on our own zone with the lowest card that does and let
// others' attacks go; deploy the highest card, on our own zone first; reveal, draw, then pass.
int strato_sphere(const DecisionRequest& request) {
  const auto& obs = request.observation().strato_sphere();
  const uint32_t seat = obs.seat();
  auto zone_of = [&](uint32_t node) {
    return node < static_cast<uint32_t>(obs.nodes_size()) ? obs.nodes(node).zone() : seat + 1;
  };
  const bool our_zone_attacked = obs.has_attack() && zone_of(obs.attack().to_node()) == seat;
  return best(request, [&](const LegalAction& legal) {
    const auto& action = legal.action().strato_sphere();
    if (action.has_prevent()) {
      return our_zone_attacked ? 100 - static_cast<int>(action.prevent().card().rank()) : 0;
    }
    if (action.has_decline()) return our_zone_attacked ? 1 : 50;
    if (action.has_attack()) return 90;
    if (action.has_deploy()) {
      const int home = zone_of(action.deploy().node()) == seat ? 20 : 0;
      return 40 + home + static_cast<int>(action.deploy().card().rank());
    }
    if (action.has_reveal()) return zone_of(action.reveal().node()) == seat ? 35 : 30;
    if (action.has_draw()) return 25;
    return 0;  // pass the turn
  });
}

}  // namespace

int choose(const DecisionRequest& request) {
  switch (request.observation().game_case()) {
    case arena::v1::Observation::kOpposingForce:
      return opposing_force(request);
    case arena::v1::Observation::kCaptureTheCommander:
      return capture_the_commander(request);
    case arena::v1::Observation::kOfficersBattle:
      return officers_battle(request);
    case arena::v1::Observation::kOrcPitFighting:
      return orc_pit_fighting(request);
    case arena::v1::Observation::kStratoSphere:
      return strato_sphere(request);
    default:
      return 0;  // a game this build does not know: its first legal action
  }
}

}  // namespace arena_bot
