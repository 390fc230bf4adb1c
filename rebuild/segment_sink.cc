#include "rebuild/segment_sink.h"

#include "keyformat/ymdh.h"

namespace clickatron::rebuild {

std::string SpanOfDay(Day day) { return day == kLookupDay ? "lookups" : FormatDay(day); }

Status SegmentSink::StartDay(Day day) {
  if (Status s = FinishCurrent(); !s.ok()) return s;
  const std::string span = SpanOfDay(day);
  const std::string name = span + "." + WorkDir::NewId();
  writer_ = std::make_unique<SegmentDirWriter>(txn_->StagingPath(name), name, span, shards_);
  switch (kind_) {
    case Kind::kCovers: writer_->Cover(span, source_); break;
    case Kind::kLate: writer_->Late(late_); break;
    case Kind::kPart: break;
  }
  if (auto it = exports_.find(day); it != exports_.end() && !it->second.empty()) writer_->Export(span, it->second);
  for (const LateRange& late : carried_late_) writer_->Late(late);
  carried_late_.clear();
  if (auto it = parts_.find(kind_ == Kind::kPart ? Day(0) : day); it != parts_.end()) {
    for (const DayPart& part : it->second) writer_->Part(part);
  }
  day_ = day;
  return writer_->Open();
}

Status SegmentSink::FinishCurrent() {
  if (!writer_) return Status::OK();
  file_ = nullptr;
  if (Status s = writer_->Finish(); !s.ok()) return s;
  txn_->AddSegment(writer_->info().name);
  written_.push_back(writer_->info());
  writer_.reset();
  return Status::OK();
}

Status SegmentSink::BeginGroup(Day day, uint32_t shard) {
  if (!writer_ || day != day_) {
    if (Status s = StartDay(day); !s.ok()) return s;
  }
  Result<SortedFileWriter*> f = writer_->Shard(shard);
  if (!f.ok()) return f.status();
  file_ = *f;
  return Status::OK();
}

Status SegmentSink::Lines(std::string_view lines, uint64_t records, uint64_t columns) {
  return file_->AddLines(lines, records, columns);
}

Status SegmentSink::EnsureDay(Day day) {
  for (const SegmentInfo& info : written_) {
    if (info.span == SpanOfDay(day)) return Status::OK();
  }
  if (writer_ && day_ == day) return Status::OK();
  return StartDay(day);
}

Status SegmentSink::Finish() { return FinishCurrent(); }

}  // namespace clickatron::rebuild
