package io.auditpipe.flink.sink;

import com.mongodb.client.model.WriteModel;
import java.io.Serializable;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.bson.Document;

/**
 * A Flink sink that writes to one MongoDB collection in unordered bulk writes (works against
 * MongoDB and FerretDB; it uses only insert and update-with-upsert).
 *
 * <p>At least once: the writer flushes its batch on every checkpoint, so a restart replays at most
 * what came after the last one. Exactness comes from the documents: deterministic {@code _id}s for
 * inserts (duplicate key = already stored) and full-value upserts. One batch is written at a time
 * on a thread of the writer's own while the task fills the next ({@link BatchInFlight}); the next
 * full batch, and every checkpoint, waits for it. A failing write is retried with exponential
 * backoff, which holds the task back (the backpressure); when retries run out the job fails and
 * restarts from its checkpoint. Documents the store rejects for good go to the dead-letter
 * collection with the reason.
 */
public class MongoBulkSink<T> implements Sink<T> {
    private static final long serialVersionUID = 1L;

    /** Maps one record to its write. */
    @FunctionalInterface
    public interface ToWriteModel<T> extends Serializable {
        WriteModel<Document> apply(T element);
    }

    private final MongoSinkSettings settings;
    private final ToWriteModel<T> toWriteModel;

    /** Where and how it writes. */
    public MongoSinkSettings settings() {
        return settings;
    }

    public MongoBulkSink(MongoSinkSettings settings, ToWriteModel<T> toWriteModel) {
        this.settings = settings;
        this.toWriteModel = toWriteModel;
    }

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
        return new MongoBulkWriter<>(
                settings, toWriteModel, context.getProcessingTimeService(), context.metricGroup());
    }
}
