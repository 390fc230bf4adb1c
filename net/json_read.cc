#include "net/json_read.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace clickatron::net {

namespace {

using rapidjson::Value;

// The parsed body, or an error quoting rapidjson's reason and where it stopped.
Status Parse(std::string_view body, rapidjson::Document* doc) {
  doc->Parse(body.data(), body.size());
  if (doc->HasParseError()) {
    return Status::Error(std::string("not JSON: ") + rapidjson::GetParseError_En(doc->GetParseError()) +
                         " at offset " + std::to_string(doc->GetErrorOffset()));
  }
  if (!doc->IsObject()) return Status::Error("not a JSON object");
  return Status::OK();
}

// The member `name` of object v, or nullptr.
const Value* Member(const Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string StringOf(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string(v->GetString(), v->GetStringLength());
}

// The "data" object of an answer, or an error.
Result<const Value*> DataOf(const rapidjson::Document& doc) {
  const Value* data = Member(doc, "data");
  if (data == nullptr || !data->IsObject()) return Status::Error("no \"data\" object");
  return data;
}

}  // namespace

Result<JsonAnswer> ReadJsonAnswer(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  const Value* code = Member(doc, "status_code");
  const Value* txt = Member(doc, "status_txt");
  if (code == nullptr || !code->IsInt()) return Status::Error("no integer \"status_code\"");
  if (txt == nullptr || !txt->IsString()) return Status::Error("no string \"status_txt\"");
  JsonAnswer a;
  a.status_code = code->GetInt();
  a.status_txt = StringOf(txt);
  a.message = StringOf(Member(doc, "message"));
  return a;
}

Result<IncrAnswer> ReadIncrAnswer(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = DataOf(doc);
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

Result<ArchiveStatsFields> ReadArchiveStats(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = DataOf(doc);
  if (!data.ok()) return data.status();
  ArchiveStatsFields fields{StringOf(Member(**data, "generation")), StringOf(Member(**data, "last_day"))};
  const Value* served = Member(**data, "served_ms");
  if (served != nullptr && served->IsInt64()) fields.served_ms = served->GetInt64();
  return fields;
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
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = DataOf(doc);
  if (!data.ok()) return data.status();
  return SlotsOf(**data);
}

Result<RealtimeStatsFields> ReadRealtimeStats(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = DataOf(doc);
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

Result<std::string> ReadDataJson(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = Parse(body, &doc); !s.ok()) return s;
  Result<const Value*> data = DataOf(doc);
  if (!data.ok()) return data.status();
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  (*data)->Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace clickatron::net
