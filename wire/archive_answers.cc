#include "wire/archive_answers.h"

#include "wire/json_doc.h"

namespace clickatron::wire {

Result<ArchiveStatsFields> ReadArchiveStats(std::string_view body) {
  rapidjson::Document doc;
  if (Status s = json::Parse(body, &doc); !s.ok()) return s;
  Result<const rapidjson::Value*> data = json::DataOf(doc);
  if (!data.ok()) return data.status();
  ArchiveStatsFields fields{json::StringOf(json::Member(**data, "generation")),
                            json::StringOf(json::Member(**data, "last_day"))};
  const rapidjson::Value* served = json::Member(**data, "served_ms");
  if (served != nullptr && served->IsInt64()) fields.served_ms = served->GetInt64();
  return fields;
}

}  // namespace clickatron::wire
