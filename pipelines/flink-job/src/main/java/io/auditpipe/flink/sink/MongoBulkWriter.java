package io.auditpipe.flink.sink;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The writer of {@link MongoBulkSink}. Runs in the task's mailbox thread only. */
class MongoBulkWriter<T> implements SinkWriter<T> {
    private static final Logger LOG = LoggerFactory.getLogger(MongoBulkWriter.class);
    static final int DUPLICATE_KEY = 11000;
    /** Write errors worth retrying (server busy, stepping down, shutting down, timeouts). */
    private static final Set<Integer> TRANSIENT = Set.of(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 50);
    private static final int MAX_REJECTED_TEXT = 1 << 20;
    /**
     * Upserts per request on FerretDB. FerretDB 1.24 (SQLite backend) holds a pooled SQLite
     * connection per update statement until the whole command ends; its pool has 100 connections,
     * and one update command of ~300 upserts next to any other writer deadlocks the server
     * (reproduced: docs/store.md). 25 per request keeps two parallel writers far below that.
     * On MongoDB the whole batch goes in one request.
     */
    static final int FERRETDB_MAX_UPDATES_PER_REQUEST = 25;

    private final MongoSinkSettings settings;
    private final MongoBulkSink.ToWriteModel<T> toWriteModel;
    private final ProcessingTimeService time;
    private final MongoClient client;
    private final MongoCollection<Document> collection;
    private final MongoCollection<Document> deadLetters;
    private final Counter written;
    private final Counter duplicates;
    private final Counter retries;
    private final Counter rejected;
    private final int maxUpdatesPerRequest;
    private List<WriteModel<Document>> buffer = new ArrayList<>();
    private volatile boolean closed;

    MongoBulkWriter(MongoSinkSettings settings, MongoBulkSink.ToWriteModel<T> toWriteModel,
                    ProcessingTimeService time, SinkWriterMetricGroup metrics) {
        this.settings = settings;
        this.toWriteModel = toWriteModel;
        this.time = time;
        this.client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(settings.uri))
                // a store that stops answering becomes a retried error, never an endless wait
                .applyToSocketSettings(s -> s.connectTimeout(10, TimeUnit.SECONDS).readTimeout(60, TimeUnit.SECONDS))
                .applyToClusterSettings(s -> s.serverSelectionTimeout(30, TimeUnit.SECONDS))
                .build());
        this.collection = client.getDatabase(settings.database).getCollection(settings.collection);
        this.maxUpdatesPerRequest = isFerretDb() ? FERRETDB_MAX_UPDATES_PER_REQUEST : Integer.MAX_VALUE;
        this.deadLetters = client.getDatabase(settings.database).getCollection(settings.deadLetterCollection);
        this.written = metrics.counter("documentsWritten");
        this.duplicates = metrics.counter("duplicatesIgnored");
        this.retries = metrics.counter("writeRetries");
        this.rejected = metrics.counter("documentsRejected");
        scheduleFlush();
    }

    /** Feature detection: buildInfo of FerretDB 1.x has "ferretdbVersion", of 2.x "ferretdb". */
    private boolean isFerretDb() {
        try {
            Document info = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
            boolean ferret = info.containsKey("ferretdbVersion") || info.containsKey("ferretdb");
            LOG.info("store for {} is {}", settings.collection, ferret ? "FerretDB" : "MongoDB " + info.get("version"));
            return ferret;
        } catch (MongoException e) {
            LOG.warn("buildInfo failed ({}); assuming FerretDB limits", e.getMessage());
            return true;
        }
    }

    private void scheduleFlush() {
        time.registerTimer(time.getCurrentProcessingTime() + settings.flushIntervalMillis, t -> {
            if (!closed) {
                flushBuffer();
                scheduleFlush();
            }
        });
    }

    @Override
    public void write(T element, Context context) throws IOException, InterruptedException {
        buffer.add(toWriteModel.apply(element));
        if (buffer.size() >= settings.batchSize) {
            flushBuffer();
        }
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        flushBuffer();
    }

    private void flushBuffer() throws IOException, InterruptedException {
        if (buffer.isEmpty()) {
            return;
        }
        List<WriteModel<Document>> all = buffer;
        buffer = new ArrayList<>();
        boolean hasUpdates = all.get(0) instanceof UpdateOneModel;
        int chunk = hasUpdates ? maxUpdatesPerRequest : all.size();
        for (int from = 0; from < all.size(); from += chunk) {
            writeWithRetries(new ArrayList<>(all.subList(from, Math.min(all.size(), from + chunk))));
        }
    }

    private void writeWithRetries(List<WriteModel<Document>> pending) throws IOException, InterruptedException {
        long backoff = settings.retryBackoffMillis;
        int attempt = 0;
        while (!pending.isEmpty()) {
            MongoException failure;
            try {
                collection.bulkWrite(pending, new BulkWriteOptions().ordered(false));
                written.inc(pending.size());
                return;
            } catch (MongoBulkWriteException e) {
                pending = sortOutErrors(pending, e);
                if (pending.isEmpty()) {
                    return;
                }
                failure = e;
            } catch (MongoException e) {
                failure = e; // network, timeout, server selection: the whole batch again (writes are idempotent)
            }
            attempt++;
            if (attempt > settings.maxRetries) {
                throw new IOException("writing " + pending.size() + " documents to " + settings.collection
                        + " failed after " + settings.maxRetries + " retries; the job restarts from its last"
                        + " checkpoint: " + failure.getMessage(), failure);
            }
            retries.inc();
            LOG.warn("bulk write to {} failed (attempt {} of {}), retrying {} documents in {} ms: {}",
                    settings.collection, attempt, settings.maxRetries, pending.size(), backoff, failure.getMessage());
            Thread.sleep(backoff);
            backoff = Math.min(backoff * 2, settings.retryMaxBackoffMillis);
        }
    }

    /** Counts what succeeded, records permanent rejections, and returns the writes to retry. */
    private List<WriteModel<Document>> sortOutErrors(List<WriteModel<Document>> pending, MongoBulkWriteException e) {
        List<WriteModel<Document>> retry = new ArrayList<>();
        boolean retryAll = e.getWriteConcernError() != null;
        int failed = 0;
        for (BulkWriteError err : e.getWriteErrors()) {
            failed++;
            WriteModel<Document> model = pending.get(err.getIndex());
            if (err.getCode() == DUPLICATE_KEY && model instanceof InsertOneModel) {
                duplicates.inc(); // already stored by an earlier attempt or a replay
            } else if (err.getCode() == DUPLICATE_KEY || TRANSIENT.contains(err.getCode())) {
                retry.add(model);
            } else {
                reject(model, err);
            }
        }
        written.inc(pending.size() - failed);
        return retryAll ? pending : retry;
    }

    private void reject(WriteModel<Document> model, BulkWriteError err) {
        rejected.inc();
        Document doc = documentOf(model);
        Object id = doc == null ? null : doc.get("_id");
        String text = doc == null ? String.valueOf(model) : doc.toJson();
        if (text.length() > MAX_REJECTED_TEXT) {
            text = text.substring(0, MAX_REJECTED_TEXT) + "...(truncated)";
        }
        Document dead = new Document("_id", "store:" + settings.collection + ":" + id)
                .append("stage", "store")
                .append("reason", "the store rejected the document for " + settings.collection + ": error "
                        + err.getCode() + ": " + err.getMessage())
                .append("original", new Document("text", text))
                .append("detected_at", new Date());
        LOG.error("store rejected document {} for {}: {}", id, settings.collection, err.getMessage());
        try {
            deadLetters.insertOne(dead);
        } catch (MongoException ex) {
            if (ex.getCode() != DUPLICATE_KEY) {
                throw ex; // cannot record it: fail rather than lose it
            }
        }
    }

    private static Document documentOf(WriteModel<Document> model) {
        if (model instanceof InsertOneModel) return ((InsertOneModel<Document>) model).getDocument();
        if (model instanceof ReplaceOneModel) return ((ReplaceOneModel<Document>) model).getReplacement();
        if (model instanceof UpdateOneModel) return (Document) ((UpdateOneModel<Document>) model).getFilter();
        return null;
    }

    @Override
    public void close() {
        closed = true;
        client.close();
    }
}
