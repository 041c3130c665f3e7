package io.auditpipe.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.auditpipe.flink.alerts.Alert;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.flink.metrics.SimpleCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The webhook against a real HTTP server (the JDK's): alerts arrive as JSON with their id; a
 * failing endpoint is retried; a blocked one never blocks the writer, and a full queue counts what
 * it drops.
 */
class WebhookSinkTest {
    private HttpServer server;
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private final List<String> ids = new CopyOnWriteArrayList<>();

    private String start(com.sun.net.httpserver.HttpHandler handler) throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/hook", handler);
        server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(2));
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    @AfterEach
    void stop() {
        if (server != null) server.stop(0);
    }

    private void record(com.sun.net.httpserver.HttpExchange x, int status)
            throws java.io.IOException {
        bodies.add(new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        ids.add(x.getRequestHeaders().getFirst("X-Auditpipe-Alert-Id"));
        x.sendResponseHeaders(status, -1);
        x.close();
    }

    static Alert alert(int i) {
        return Alert.of(
                        "brute_force",
                        Alert.HIGH,
                        "brute_force/db-01/u" + i + "/0",
                        "db-01",
                        "u" + i,
                        "summary " + i)
                .withEvidence(List.of("db-01/" + i), 0, 0);
    }

    static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    @Test
    void withASecretEachPostCarriesTheSignatureOfItsTimeAndBody() throws Exception {
        List<String> signatures = new CopyOnWriteArrayList<>();
        String url =
                start(
                        x -> {
                            signatures.add(
                                    String.valueOf(
                                            x.getRequestHeaders()
                                                    .getFirst(WebhookSink.SIGNATURE_HEADER)));
                            record(x, 200);
                        });
        SimpleCounter sent = new SimpleCounter();
        WebhookSink.Writer w =
                new WebhookSink(url, Duration.ofSeconds(2), 0, 10, "k3y")
                        .writer(sent, new SimpleCounter(), new SimpleCounter(), 10);
        long before = System.currentTimeMillis() / 1000;
        try {
            w.write(alert(1), null);
            waitFor(() -> sent.getCount() == 1, "the alert delivered");
            long after = System.currentTimeMillis() / 1000;
            // what a receiver computes over the time and the body it got, with the shared key
            String got = signatures.get(0);
            long at = Long.parseLong(got.substring(2, got.indexOf(',')));
            assertTrue(before <= at && at <= after, got);
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(
                    new javax.crypto.spec.SecretKeySpec(
                            "k3y".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((at + ".").getBytes(StandardCharsets.US_ASCII));
            String expected =
                    "t="
                            + at
                            + ",sha256="
                            + java.util.HexFormat.of()
                                    .formatHex(
                                            mac.doFinal(
                                                    bodies.get(0)
                                                            .getBytes(StandardCharsets.UTF_8)));
            assertEquals(List.of(expected), signatures);
            byte[] body = bodies.get(0).getBytes(StandardCharsets.UTF_8);
            assertTrue(!expected.equals(WebhookSink.signature("other", at, body)));
            assertTrue(
                    !expected.equals(WebhookSink.signature("k3y", at + 1, body)),
                    "the time is signed");
        } finally {
            w.close();
        }
    }

    @Test
    void theSignatureIsTheCliOnes() {
        // tests/unit/stack/test_integrity_webhook.py: the same key, time and body
        byte[] body = "{\"_id\": \"a-1\"}".getBytes(StandardCharsets.UTF_8);
        assertEquals(
                "t=1800000000,sha256=70cb4a1b2151df8df801b6307ab39c906663419be0416334d3b21e74cb79a491",
                WebhookSink.signature("s3cret", 1_800_000_000L, body));
    }

    @Test
    void alertsArePostedAsJsonWithTheirIdAndAFailingEndpointIsRetried() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        String url =
                start(
                        x ->
                                record(
                                        x,
                                        calls.incrementAndGet() <= 2
                                                ? 503
                                                : 200)); // fails twice, then accepts
        try (Counted c = counted(new WebhookSink(url, Duration.ofSeconds(2), 3, 10))) {
            c.writer.write(alert(1), null);
            waitFor(() -> c.sent.getCount() == 1, "the alert delivered");
            assertEquals(3, calls.get(), "two failures, retried, then delivered");
            assertEquals("brute_force/db-01/u1/0", ids.get(2));
            assertTrue(
                    bodies.get(2).contains("\"_id\": \"brute_force/db-01/u1/0\"")
                            && bodies.get(2).contains("\"evidence\""),
                    bodies.get(2));
            assertTrue(
                    bodies.get(2).contains("\"mitre-attack\": [\"T1110.001\"]"),
                    "the rule's frameworks: " + bodies.get(2));
            assertEquals(0, c.failed.getCount());
        }
    }

    @Test
    void aDeadEndpointIsGivenUpOnAfterTheRetries() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        String url =
                start(
                        x -> {
                            calls.incrementAndGet();
                            record(x, 500);
                        });
        try (Counted c = counted(new WebhookSink(url, Duration.ofSeconds(2), 2, 10))) {
            c.writer.write(alert(1), null);
            waitFor(() -> c.failed.getCount() == 1, "the alert given up on");
            assertEquals(3, calls.get(), "the first try and two retries");
            assertEquals(0, c.sent.getCount());
        }
    }

    @Test
    void aBlockedEndpointNeverHoldsUpTheWriterAndAFullQueueCountsWhatItDrops() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch first = new CountDownLatch(1);
        String url =
                start(
                        x -> {
                            first.countDown();
                            try {
                                release.await(); // the endpoint hangs
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            record(x, 200);
                        });
        try (Counted c = counted(new WebhookSink(url, Duration.ofSeconds(30), 0, 5))) {
            try {
                c.writer.write(alert(0), null);
                assertTrue(
                        first.await(10, TimeUnit.SECONDS),
                        "the first POST reached the endpoint, which now hangs");
                for (int i = 1; i <= 20; i++) {
                    c.writer.write(
                            alert(i),
                            null); // returns at once: the queue takes 5, the rest are dropped
                }
                c.writer.flush(false); // a checkpoint does not wait for the endpoint either
                assertEquals(
                        15,
                        c.dropped.getCount(),
                        "20 written while the endpoint hung: 5 queued, 15 dropped");
                release.countDown();
                waitFor(() -> c.sent.getCount() == 6, "the hung one and the 5 queued delivered");
            } finally {
                release.countDown();
            }
        }
    }

    /** A writer of {@code sink} with the counters it keeps; closing it closes the writer. */
    private static Counted counted(WebhookSink sink) {
        SimpleCounter sent = new SimpleCounter(), failed = new SimpleCounter();
        SimpleCounter dropped = new SimpleCounter();
        return new Counted(sink.writer(sent, failed, dropped, 10), sent, failed, dropped);
    }

    private record Counted(
            WebhookSink.Writer writer,
            SimpleCounter sent,
            SimpleCounter failed,
            SimpleCounter dropped)
            implements AutoCloseable {
        @Override
        public void close() {
            writer.close();
        }
    }
}
