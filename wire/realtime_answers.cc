#include "wire/realtime_answers.h"

#include "wire/json_doc.h"

namespace clickatron::wire {

using rapidjson::Value;
using json::Member;
using json::StringOf;

Result<IncrAnswer> ReadIncrAnswer(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = json::DataOf(doc);
  if (!data.ok()) return data.status();
  const Value* applied = Member(**data, "applied");
  const Value* duplicate = Member(**data, "duplicate");
  const Value* seq = Member(**data, "seq");
  if (applied == nullptr || !applied->IsUint64() || duplicate == nullptr || !duplicate->IsUint64() ||
      seq == nullptr || !seq->IsInt64()) {
    return Status::Error("not an /incr answer: \"applied\", \"duplicate\" and \"seq\" are not all integers");
  }
  return IncrAnswer{applied->GetUint64(), duplicate->GetUint64(), seq->GetInt64()};
}

namespace {

Result<std::vector<RealtimeSlotFields>> SlotsOf(const Value& data) {
  const Value* slots = Member(data, "slots");
  if (slots == nullptr || !slots->IsArray()) return Status::Error("no \"slots\" array");
  std::vector<RealtimeSlotFields> out;
  for (const Value& slot : slots->GetArray()) {
    const Value* day = Member(slot, "day");
    const Value* state = Member(slot, "state");
    if (day == nullptr || !(day->IsString() || day->IsNull()) || state == nullptr || !state->IsString()) {
      return Status::Error("slot " + std::to_string(out.size()) +
                           ": no string \"state\" and string or null \"day\"");
    }
    out.push_back(RealtimeSlotFields{StringOf(day), StringOf(state)});
  }
  return out;
}

}  // namespace

Result<std::vector<RealtimeSlotFields>> ReadRealtimeSlots(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = json::DataOf(doc);
  if (!data.ok()) return data.status();
  return SlotsOf(**data);
}

Result<RealtimeStatsFields> ReadRealtimeStats(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = json::DataOf(doc);
  if (!data.ok()) return data.status();
  Result<std::vector<RealtimeSlotFields>> slots = SlotsOf(**data);
  if (!slots.ok()) return slots.status();
  RealtimeStatsFields out;
  out.slots = std::move(slots).value();
  for (auto [name, field] : {std::pair{"closed_through", &out.closed_through}, std::pair{"ring", &out.ring}}) {
    const Value* v = Member(**data, name);
    if (v != nullptr && !v->IsString() && !v->IsNull()) return Status::Error(std::string("\"") + name + "\" is not a string");
    *field = StringOf(v);
  }
  return out;
}

}  // namespace clickatron::wire
