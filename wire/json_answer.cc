#include "wire/json_answer.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "wire/json_doc.h"

namespace clickatron::wire {

namespace json {

using rapidjson::Value;

Status Parse(std::string_view body, rapidjson::Document* doc) {
  doc->Parse(body.data(), body.size());
  if (doc->HasParseError()) {
    return Status::Error(std::string("not JSON: ") + rapidjson::GetParseError_En(doc->GetParseError()) +
                         " at offset " + std::to_string(doc->GetErrorOffset()));
  }
  if (!doc->IsObject()) return Status::Error("not a JSON object");
  return Status::OK();
}

const Value* Member(const Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string StringOf(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string(v->GetString(), v->GetStringLength());
}

Result<const Value*> DataOf(const rapidjson::Document& doc) {
  const Value* data = Member(doc, "data");
  if (data == nullptr || !data->IsObject()) return Status::Error("no \"data\" object");
  return data;
}

}  // namespace json

Result<JsonAnswer> ReadJsonAnswer(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  const rapidjson::Value* code = json::Member(doc, "status_code");
  const rapidjson::Value* txt = json::Member(doc, "status_txt");
  if (code == nullptr || !code->IsInt()) return Status::Error("no integer \"status_code\"");
  if (txt == nullptr || !txt->IsString()) return Status::Error("no string \"status_txt\"");
  JsonAnswer a;
  a.status_code = code->GetInt();
  a.status_txt = json::StringOf(txt);
  a.message = json::StringOf(json::Member(doc, "message"));
  return a;
}

Result<std::string> ReadDataJson(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  Result<const rapidjson::Value*> data = json::DataOf(doc);
  if (!data.ok()) return data.status();
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  (*data)->Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace clickatron::wire
