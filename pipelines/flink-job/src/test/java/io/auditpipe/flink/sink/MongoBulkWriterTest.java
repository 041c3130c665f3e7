package io.auditpipe.flink.sink;

import static io.auditpipe.flink.sink.WriteErrors.Outcome.ALREADY_STORED;
import static io.auditpipe.flink.sink.WriteErrors.Outcome.CHECK_FOR_COLLISION;
import static io.auditpipe.flink.sink.WriteErrors.Outcome.REJECT;
import static io.auditpipe.flink.sink.WriteErrors.Outcome.RETRY;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.auditpipe.flink.options.JobOptions;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The bulk writer's decisions that need no store: error sorting and one upsert per row. */
class MongoBulkWriterTest {
    @Test
    void aRequestTimeoutOfZeroIsRefusedNotTakenForNoTimeout() {
        Configuration options = new Configuration();
        options.set(JobOptions.STORE_URI, "mongodb://127.0.0.1:1");
        MongoSinkSettings settings = MongoSinkSettings.forCollection(options, "c");
        IllegalArgumentException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        IllegalArgumentException.class,
                        () -> settings.withRequestTimeout(java.time.Duration.ZERO));
        org.junit.jupiter.api.Assertions.assertTrue(
                e.getMessage().contains("sink.request-timeout"));
        assertEquals(
                20_000L,
                settings.withRequestTimeout(java.time.Duration.ofSeconds(20)).requestTimeoutMillis);
    }

    private static WriteModel<Document> upsert(String id, long count) {
        return new UpdateOneModel<>(
                new Document("_id", id),
                new Document("$set", new Document("count", count)),
                new UpdateOptions().upsert(true));
    }

    private static WriteModel<Document> insert(String id) {
        return new InsertOneModel<>(new Document("_id", id).append("line_sha256", "ab"));
    }

    private static String describe(List<WriteModel<Document>> models) {
        return models.stream()
                .map(
                        m ->
                                m instanceof UpdateOneModel
                                        ? ((Document) ((UpdateOneModel<Document>) m).getFilter())
                                                        .get("_id")
                                                + "="
                                                + ((Document)
                                                                ((Document)
                                                                                ((UpdateOneModel<
                                                                                                        Document>)
                                                                                                m)
                                                                                        .getUpdate())
                                                                        .get("$set"))
                                                        .get("count")
                                        : "insert "
                                                + ((InsertOneModel<Document>) m)
                                                        .getDocument()
                                                        .get("_id"))
                .collect(Collectors.joining(", "));
    }

    @Test
    void keepsOnlyTheLatestUpsertOfEachRowInItsPlace() {
        List<WriteModel<Document>> batch =
                List.of(
                        upsert("m1|a", 1),
                        upsert("m1|b", 4),
                        upsert("m1|a", 2),
                        upsert("m1|a", 3),
                        upsert("m2|a", 1));
        assertEquals("m1|b=4, m1|a=3, m2|a=1", describe(MongoBulkWriter.latestUpsertPerId(batch)));
    }

    @Test
    void leavesInsertsAlone() {
        List<WriteModel<Document>> batch = List.of(insert("s/1"), insert("s/1"), insert("s/2"));
        assertEquals(batch, MongoBulkWriter.latestUpsertPerId(batch));
    }

    @Test
    void aDuplicateInsertIsAReplayUnlessItsDigestSaysOtherwise() {
        assertEquals(
                CHECK_FOR_COLLISION, WriteErrors.classify(11000, insert("s/1"), "line_sha256"));
        assertEquals(ALREADY_STORED, WriteErrors.classify(11000, insert("s/1"), null));
        assertEquals(
                ALREADY_STORED,
                WriteErrors.classify(
                        11000, new InsertOneModel<>(new Document("_id", "x")), "line_sha256"));
        assertEquals(
                RETRY,
                WriteErrors.classify(11000, upsert("m1|a", 1), null),
                "two upserts racing: retry");
    }

    @Test
    void unknownErrorsAreRetriedNotRejected() {
        assertEquals(RETRY, WriteErrors.classify(91, insert("s/1"), null), "shutting down");
        assertEquals(RETRY, WriteErrors.classify(424242, insert("s/1"), null), "unknown code");
        assertEquals(RETRY, WriteErrors.classify(1, insert("s/1"), null), "InternalError");
        assertEquals(
                REJECT, WriteErrors.classify(10334, insert("s/1"), null), "BSONObjectTooLarge");
        assertEquals(
                REJECT,
                WriteErrors.classify(121, insert("s/1"), null),
                "DocumentValidationFailure");
    }

    @Test
    void aRejectionOnTheTopicFitsTheTopicWhateverTheDocumentsSize() {
        Document doc = new Document("_id", "s/1").append("sqltext", "x".repeat(3 << 20));
        Document dead =
                new Document("_id", "store:audit_events:s/1")
                        .append("stage", "store")
                        .append("reason", "the store rejected the document")
                        .append(
                                "original",
                                new Document("document", doc)
                                        .append("length", doc.toJson().length()));
        byte[] small = StoreRejections.topicJson(dead, 8 << 20);
        assertEquals(
                dead.toJson(
                        org.bson.json.JsonWriterSettings.builder()
                                .outputMode(org.bson.json.JsonMode.RELAXED)
                                .build()),
                new String(small, java.nio.charset.StandardCharsets.UTF_8),
                "whole when it fits");
        byte[] cut = StoreRejections.topicJson(dead, 1 << 20);
        org.junit.jupiter.api.Assertions.assertTrue(cut.length <= 1 << 20, "fits: " + cut.length);
        Document parsed = Document.parse(new String(cut, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals("store:audit_events:s/1", parsed.get("_id"));
        assertEquals(true, ((Document) parsed.get("original")).get("truncated"));
        assertEquals(doc.toJson().length(), ((Document) parsed.get("original")).get("length"));
    }
}
