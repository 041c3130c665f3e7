package io.auditpipe.flink.stream;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.parser.AuditEvent;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;
import org.bson.Document;

/**
 * What the stream carries (docs/stream.md): each stored event in every configured format, each to
 * its format's topic, keyed by the event's id; each alert in OCSF and ECS (the alerts topic has it
 * in auditpipe's own shape). The sink writes them in Kafka transactions committed with the job's
 * checkpoints, so a consumer reading committed messages sees each once.
 */
public final class StreamMessages {
    private StreamMessages() {}

    /**
     * The most characters of a statement, an original record or a field of {@code extra} a message
     * carries: a SIEM gets the event, the store and the archive keep every byte (a message with a
     * cut field says which in its header {@link StreamMessage#TRUNCATED_HEADER}, and OCSF's in
     * {@code metadata.is_truncated}, ECS's in {@code labels.truncated}). 32,768 characters are at
     * most 192 KiB of JSON (6 bytes for an escaped control character), so a message stays within
     * {@link #MAX_MESSAGE_BYTES} unless its record has many long fields.
     */
    public static final int TEXT_CHARS = 32 * 1024;

    /**
     * The largest message: one larger (a record with many long fields) is sent without its
     * statement, original record and extra fields, marked truncated. The topics and the producer
     * allow more (the CLI's limits.py: the contract's stream_max_message_bytes plus framing).
     */
    public static final int MAX_MESSAGE_BYTES = 1024 * 1024;

    /** The formats and the topic of each: what the stream's operators need of the options. */
    public record Settings(
            List<StreamFormat> formats, Map<StreamFormat, String> topics, String version)
            implements Serializable {
        public Settings {
            formats = List.copyOf(formats);
            topics = new EnumMap<>(topics);
        }

        public boolean streamsAlerts() {
            return formats.contains(StreamFormat.OCSF) || formats.contains(StreamFormat.ECS);
        }
    }

    /** Each stored event in each format. */
    public record OfEvents(Settings settings)
            implements FlatMapFunction<IngestedEvent, StreamMessage> {
        @Override
        public void flatMap(IngestedEvent ie, Collector<StreamMessage> out) {
            long time = ie.event.eventTimeMillis;
            long ingest = ie.origin != null ? ie.origin.timestampMillis : time;
            for (StreamFormat f : settings.formats) {
                List<String> cut = new ArrayList<>();
                StreamMessage m =
                        message(
                                settings.topics.get(f),
                                ie.event.id,
                                document(f, ie, ingest, false, cut),
                                time);
                if (m.value.length > MAX_MESSAGE_BYTES) {
                    cut.clear();
                    m =
                            message(
                                    settings.topics.get(f),
                                    ie.event.id,
                                    document(f, ie, ingest, true, cut),
                                    time);
                }
                m.truncated = cut.isEmpty() ? null : String.join(",", cut);
                out.collect(m);
            }
        }

        /**
         * The event in format {@code f}, its long texts cut; {@code bare}: without statement,
         * original and extra. What was cut or left out is added to {@code cut}.
         */
        private Document document(
                StreamFormat f, IngestedEvent ie, long ingest, boolean bare, List<String> cut) {
            AuditEvent e = shortened(ie.event, cut, bare);
            return switch (f) {
                case AUDITPIPE -> {
                    // the stored document as the chain made it (its dates written as ISO-8601 by
                    // Json), a copy of it where a text is cut: the store's writer and the archive
                    // read the same one
                    Document stored = ie.document != null ? ie.document : EventDocument.of(ie);
                    String original = bare ? null : cut(ie.original, "original", cut);
                    if (e == ie.event && original == ie.original) yield stored;
                    Document d = new Document(stored);
                    if (e != ie.event) { // its statement and extra fields as shortened
                        if (e.sqltext != null) d.put("sqltext", e.sqltext);
                        else d.remove("sqltext");
                        if (e.extra != null && !e.extra.isEmpty())
                            d.put(
                                    "extra",
                                    new Document(
                                            new java.util.LinkedHashMap<String, Object>(e.extra)));
                        else d.remove("extra");
                    }
                    if (original == null) d.remove("original");
                    else d.put("original", original);
                    yield d;
                }
                case OCSF -> {
                    Document d = Ocsf.event(e, settings.version, ingest);
                    if (!cut.isEmpty())
                        d.get("metadata", Document.class).append("is_truncated", true);
                    yield d;
                }
                case ECS -> {
                    Document d = Ecs.event(e, ingest);
                    if (!cut.isEmpty()) {
                        Document labels = d.get("labels", Document.class);
                        if (labels == null) d.append("labels", labels = new Document());
                        labels.append("truncated", String.join(",", cut));
                    }
                    yield d;
                }
            };
        }
    }

    /** Each alert in OCSF (a Detection Finding) and ECS. */
    public record OfAlerts(Settings settings) implements FlatMapFunction<Alert, StreamMessage> {
        @Override
        public void flatMap(Alert a, Collector<StreamMessage> out) {
            for (StreamFormat f : settings.formats) {
                Document d =
                        switch (f) {
                            case AUDITPIPE -> null;
                            case OCSF -> Ocsf.finding(a, settings.version);
                            case ECS -> Ecs.alert(a);
                        };
                if (d != null)
                    out.collect(message(settings.topics.get(f), a.id, d, a.raisedAtMillis));
            }
        }
    }

    /**
     * The event with its statement and extra fields cut to {@link #TEXT_CHARS} (or left out when
     * {@code bare}), each field cut or left out named in {@code cut}; the event itself is not
     * changed.
     */
    static AuditEvent shortened(AuditEvent e, List<String> cut, boolean bare) {
        boolean longExtra =
                e.extra != null
                        && e.extra.values().stream()
                                .anyMatch(v -> v != null && v.length() > TEXT_CHARS);
        boolean longText = e.sqltext != null && e.sqltext.length() > TEXT_CHARS;
        if (!bare && !longExtra && !longText) return e;
        AuditEvent copy = e.copy();
        if (bare) {
            if (copy.sqltext != null) cut.add("sqltext");
            if (copy.extra != null && !copy.extra.isEmpty()) cut.add("extra");
            cut.add("original");
            copy.sqltext = null;
            copy.extra = new java.util.LinkedHashMap<>();
            return copy;
        }
        copy.sqltext = cut(copy.sqltext, "sqltext", cut);
        if (longExtra) {
            java.util.Map<String, String> extra = new java.util.LinkedHashMap<>();
            e.extra.forEach((k, v) -> extra.put(k, cut(v, "extra." + k, cut)));
            copy.extra = extra;
        }
        return copy;
    }

    /**
     * {@code s} cut to {@link #TEXT_CHARS} characters (never inside a surrogate pair), {@code name}
     * added to {@code cut} when it was.
     */
    static String cut(String s, String name, List<String> cut) {
        if (s == null || s.length() <= TEXT_CHARS) return s;
        int end = Character.isHighSurrogate(s.charAt(TEXT_CHARS - 1)) ? TEXT_CHARS - 1 : TEXT_CHARS;
        cut.add(name);
        return s.substring(0, end);
    }

    static StreamMessage message(String topic, String key, Document d, long time) {
        return new StreamMessage(topic, key, Json.utf8(d), time);
    }
}
