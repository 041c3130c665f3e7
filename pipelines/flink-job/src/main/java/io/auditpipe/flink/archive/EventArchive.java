package io.auditpipe.flink.archive;

import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.sink.StoreDocuments;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.apache.flink.api.common.serialization.Encoder;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The archive (docs/archive.md): the job's second, long-lived copy of every stored event, and the
 * chain heads' manifest, as files written by Flink's FileSink.
 *
 * <pre>
 * &lt;archive.path&gt;/events/server=&lt;server&gt;/date=&lt;yyyy-mm-dd of event time, UTC&gt;/part-*.parquet
 * &lt;archive.path&gt;/manifest/chain-heads/server=&lt;server&gt;/part-*.jsonl
 * </pre>
 *
 * Files are in progress (hidden: a leading dot) until the checkpoint after them completes, then
 * renamed into place: exactly once, whatever restarts in between (FileSink's two-phase commit).
 * Both roll on every checkpoint, so a file holds one checkpoint interval of one server's day.
 */
public final class EventArchive {
    private EventArchive() {}

    private static final DateTimeFormatter DAY =
            DateTimeFormatter.ISO_LOCAL_DATE.withZone(ZoneOffset.UTC);

    /** Files named part-...{@code suffix}. */
    private static OutputFileConfig parts(String suffix) {
        return OutputFileConfig.builder().withPartPrefix("part").withPartSuffix(suffix).build();
    }

    /** The events' Parquet sink under {@code <base>/events}. */
    public static FileSink<IngestedEvent> events(String base) {
        return FileSink.forBulkFormat(new Path(base, "events"), ArchiveParquet.writerFactory())
                .withBucketAssigner(new ServerAndDay())
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .withOutputFileConfig(parts(".parquet"))
                .build();
    }

    /** The chain heads, one JSON document per line, under {@code <base>/manifest/chain-heads}. */
    public static FileSink<ChainHead> chainHeads(String base) {
        return FileSink.forRowFormat(new Path(base, "manifest/chain-heads"), new HeadLines())
                .withBucketAssigner(new HeadServer())
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .withOutputFileConfig(parts(".jsonl"))
                .build();
    }

    /**
     * A server name as a directory name: letters, digits, '.', '_' and '-' kept, anything else %XX.
     */
    public static String pathSafe(String server) {
        StringBuilder out = new StringBuilder();
        for (byte b : server.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            if ((c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '-') {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", b & 0xFF));
            }
        }
        return out.toString();
    }

    static final class ServerAndDay implements BucketAssigner<IngestedEvent, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getBucketId(IngestedEvent e, Context context) {
            return "server="
                    + pathSafe(e.event.server)
                    + "/date="
                    + DAY.format(Instant.ofEpochMilli(e.event.eventTimeMillis));
        }

        @Override
        public SimpleVersionedSerializer<String> getSerializer() {
            return SimpleVersionedStringSerializer.INSTANCE;
        }
    }

    static final class HeadServer implements BucketAssigner<ChainHead, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getBucketId(ChainHead h, Context context) {
            return "server=" + pathSafe(h.server);
        }

        @Override
        public SimpleVersionedSerializer<String> getSerializer() {
            return SimpleVersionedStringSerializer.INSTANCE;
        }
    }

    static final class HeadLines implements Encoder<ChainHead> {
        private static final long serialVersionUID = 1L;
        private static final JsonWriterSettings JSON =
                JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

        @Override
        public void encode(ChainHead h, OutputStream out) throws IOException {
            out.write(StoreDocuments.chainHead(h).toJson(JSON).getBytes(StandardCharsets.UTF_8));
            out.write('\n');
        }
    }
}
