package io.auditpipe.flink.sink;

import io.auditpipe.flink.options.JobOptions;
import java.io.Serializable;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;

/** Where and how a {@link MongoBulkSink} writes. */
public final class MongoSinkSettings implements Serializable, Cloneable {
    private static final long serialVersionUID = 1L;

    final String uri;
    final String database;
    final String collection;

    /** Where documents the store refuses for good are recorded (stage "store"). */
    final String deadLetterCollection;

    final int batchSize;
    long flushIntervalMillis;
    final int maxRetries;
    final long retryBackoffMillis;
    final long retryMaxBackoffMillis;

    /**
     * Longest wait for the store's answer to one request: a store that stops answering becomes a
     * retried error.
     */
    long requestTimeoutMillis;

    /**
     * A field of inserted documents holding a digest of their source (events: line_sha256), or
     * null. With it, a duplicate key is checked: same digest = a replay, another = a collision.
     */
    String digestField;

    /**
     * Where rejections also go: the dead-letter topic and the Kafka producer properties to reach it
     * (bootstrap servers, security, max.request.size), or null for the store only.
     */
    String deadLetterTopic;

    java.util.Map<String, String> deadLetterProducer;

    /**
     * Batches written at once ({@link BatchInFlight}): 1 keeps the order of upserts; a writer of
     * inserts only may have 2.
     */
    int batchesInFlight;

    /**
     * Hears of each document the store refused for good (null: nobody), as its dead letter is
     * written.
     */
    Rejections rejections;

    /**
     * Hears of each document a writer's store refused for good: the reason its dead letter (stage
     * "store") gives.
     */
    @FunctionalInterface
    public interface Rejections extends Serializable {
        void rejected(String reason);
    }

    /** Settings for one collection from the job options. */
    public static MongoSinkSettings forCollection(Configuration job, String collection) {
        return forCollection(job, collection, job.get(JobOptions.STORE_URI));
    }

    /**
     * Settings for the sessions or the baselines collection: written as {@link #profilesUri}'s
     * user.
     */
    public static MongoSinkSettings forProfiles(Configuration job, String collection) {
        return forCollection(job, collection, profilesUri(job));
    }

    /** {@code store.profiles-uri}, else {@code store.uri}: who writes sessions and baselines. */
    public static String profilesUri(Configuration job) {
        return job.getOptional(JobOptions.STORE_PROFILES_URI).orElse(job.get(JobOptions.STORE_URI));
    }

    private static MongoSinkSettings forCollection(
            Configuration job, String collection, String uri) {
        return new MongoSinkSettings(job, collection, uri)
                .withRequestTimeout(job.get(JobOptions.SINK_REQUEST_TIMEOUT));
    }

    private MongoSinkSettings(Configuration job, String collection, String uri) {
        this.uri = uri;
        this.database = job.get(JobOptions.STORE_DATABASE);
        this.collection = collection;
        this.deadLetterCollection = job.get(JobOptions.DEAD_LETTER_COLLECTION);
        this.batchSize = job.get(JobOptions.SINK_BATCH_SIZE);
        this.flushIntervalMillis = job.get(JobOptions.SINK_FLUSH_INTERVAL).toMillis();
        this.maxRetries = job.get(JobOptions.SINK_MAX_RETRIES);
        this.retryBackoffMillis = job.get(JobOptions.SINK_RETRY_BACKOFF).toMillis();
        this.retryMaxBackoffMillis = job.get(JobOptions.SINK_RETRY_MAX_BACKOFF).toMillis();
        this.batchesInFlight = 1;
    }

    /** The same settings, waiting at most {@code timeout} for the store's answer to a request. */
    public MongoSinkSettings withRequestTimeout(Duration timeout) {
        if (timeout.toMillis() < 1
                || timeout.toMillis()
                        > Integer.MAX_VALUE) { // the driver reads 0 as no timeout at all
            throw new IllegalArgumentException(
                    "sink.request-timeout must be at least 1 ms (and under 24 days), not "
                            + timeout);
        }
        return with(s -> s.requestTimeoutMillis = timeout.toMillis());
    }

    /**
     * The same settings, checking duplicate keys of inserts against {@code field} (see {@link
     * #digestField}).
     */
    public MongoSinkSettings withDigestField(String field) {
        return with(s -> s.digestField = field);
    }

    /**
     * The same settings, also publishing rejections to {@code topic} with a producer of {@code
     * producer} properties.
     */
    public MongoSinkSettings withDeadLetterTopic(
            String topic, java.util.Map<String, String> producer) {
        return with(
                s -> {
                    s.deadLetterTopic = topic;
                    s.deadLetterProducer =
                            producer == null ? null : new java.util.HashMap<>(producer);
                });
    }

    /**
     * The same settings, writing up to {@code n} batches at once to FerretDB (to MongoDB, one).
     * Only for a writer of inserts only: with more than one, two batches may be applied in either
     * order, which an insert by {@code _id} does not mind and an upsert does (the older value could
     * be the one stored). Not on MongoDB: its capped collection trims in arrival order, and a
     * server's newer links removed before older ones would read as a deletion to verify;
     * auditpipe's own trimming of the local FerretDB removes a prefix of each server's chain
     * whatever the order (docs/archive.md).
     */
    public MongoSinkSettings withBatchesInFlight(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("batches in flight must be at least 1, not " + n);
        }
        return with(s -> s.batchesInFlight = n);
    }

    /**
     * The same settings with documents waiting at most {@code interval} in a partly filled batch.
     */
    public MongoSinkSettings withFlushInterval(Duration interval) {
        return with(s -> s.flushIntervalMillis = interval.toMillis());
    }

    /** The same settings, telling {@code listener} of each document the store refuses for good. */
    public MongoSinkSettings withRejections(Rejections listener) {
        return with(s -> s.rejections = listener);
    }

    public String collection() {
        return collection;
    }

    /** The connection string it writes with (its user among them). */
    public String uri() {
        return uri;
    }

    /**
     * A copy with {@code change} made to it, for a {@code with...} method: the fields a {@code
     * with...} sets are written only there, on a copy no one else holds yet.
     */
    private MongoSinkSettings with(java.util.function.Consumer<MongoSinkSettings> change) {
        MongoSinkSettings s;
        try {
            s = (MongoSinkSettings) clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
        change.accept(s);
        return s;
    }
}
