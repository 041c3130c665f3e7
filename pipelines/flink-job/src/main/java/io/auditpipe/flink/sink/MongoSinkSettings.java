package io.auditpipe.flink.sink;

import io.auditpipe.flink.options.JobOptions;

import org.apache.flink.configuration.Configuration;

import java.io.Serializable;
import java.time.Duration;

/** Where and how a {@link MongoBulkSink} writes. */
public final class MongoSinkSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    final String uri;
    final String database;
    final String collection;
    /** Where documents the store refuses for good are recorded (stage "store"). */
    final String deadLetterCollection;
    final int batchSize;
    final long flushIntervalMillis;
    final int maxRetries;
    final long retryBackoffMillis;
    final long retryMaxBackoffMillis;

    public MongoSinkSettings(String uri, String database, String collection, String deadLetterCollection,
                             int batchSize, Duration flushInterval, int maxRetries,
                             Duration retryBackoff, Duration retryMaxBackoff) {
        this.uri = uri;
        this.database = database;
        this.collection = collection;
        this.deadLetterCollection = deadLetterCollection;
        this.batchSize = batchSize;
        this.flushIntervalMillis = flushInterval.toMillis();
        this.maxRetries = maxRetries;
        this.retryBackoffMillis = retryBackoff.toMillis();
        this.retryMaxBackoffMillis = retryMaxBackoff.toMillis();
    }

    /** Settings for one collection from the job options. */
    public static MongoSinkSettings forCollection(Configuration job, String collection) {
        return new MongoSinkSettings(job.get(JobOptions.STORE_URI), job.get(JobOptions.STORE_DATABASE), collection,
                job.get(JobOptions.DEAD_LETTER_COLLECTION), job.get(JobOptions.SINK_BATCH_SIZE),
                job.get(JobOptions.SINK_FLUSH_INTERVAL), job.get(JobOptions.SINK_MAX_RETRIES),
                job.get(JobOptions.SINK_RETRY_BACKOFF), job.get(JobOptions.SINK_RETRY_MAX_BACKOFF));
    }

    public String collection() {
        return collection;
    }
}
