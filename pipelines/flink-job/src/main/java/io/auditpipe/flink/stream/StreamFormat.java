package io.auditpipe.flink.stream;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The shapes the job streams every stored event (and every alert) in, each to a topic of its own
 * (docs/stream.md): the stored document as schemas/audit-event.schema.json describes it, its OCSF
 * projection, its ECS projection with OpenTelemetry's database attributes.
 */
public enum StreamFormat {
    /**
     * The stored event document, times as ISO-8601 strings (schemas/audit-event.schema.json);
     * alerts are not repeated here (topic audit.alerts has them).
     */
    AUDITPIPE("auditpipe"),
    /**
     * OCSF 1.8.0: Datastore Activity (6005), Authentication (3002) for logins and logouts,
     * Detection Finding (2004) for alerts.
     */
    OCSF("ocsf"),
    /** Elastic Common Schema with OpenTelemetry's db.* attributes; alerts as event.kind alert. */
    ECS("ecs");

    public final String id;

    StreamFormat(String id) {
        this.id = id;
    }

    /**
     * The formats of a comma-separated list ("" for none); IllegalArgumentException naming an
     * unknown one.
     */
    public static List<StreamFormat> parse(String list) {
        List<StreamFormat> out = new ArrayList<>();
        for (String part : list.split(",")) {
            String name = part.trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty()) continue;
            StreamFormat f = null;
            for (StreamFormat candidate : values()) {
                if (candidate.id.equals(name)) f = candidate;
            }
            if (f == null) {
                throw new IllegalArgumentException(
                        "'"
                                + part.trim()
                                + "' is not a stream format (one of "
                                + String.join(", ", ids())
                                + ")");
            }
            if (!out.contains(f)) out.add(f);
        }
        return out;
    }

    public static List<String> ids() {
        List<String> out = new ArrayList<>();
        for (StreamFormat f : values()) out.add(f.id);
        return out;
    }
}
