package io.auditpipe.flink.sink;

import io.auditpipe.flink.alerts.Alert;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POSTs each alert as JSON (the alerts collection's document) to a webhook, on a thread of its own:
 * the pipeline only puts the alert in a bounded queue and never waits for the endpoint. A POST that
 * fails (connection error, timeout, a status other than 2xx) is retried with backoff (1 s,
 * doubling); after the last retry the alert is counted ({@code webhookFailed}) and logged. When the
 * queue is full (the endpoint is down or slow for long) a new alert is not queued ({@code
 * webhookDropped}). Either way the alert is in the alerts collection and on audit.alerts: the
 * webhook is a notification, not the record. At least once: after a restart, alerts replayed from
 * the checkpoint are POSTed again; the receiver tells them by their id (header {@code
 * X-Auditpipe-Alert-Id} and field {@code _id}). With a secret, each POST carries {@link
 * #SIGNATURE_HEADER}, signed again at each attempt: the receiver recomputes the HMAC over the time
 * and the body it got, refuses a request whose signature differs (one not from the job, or changed
 * on the way) and one whose time is more than 5 minutes from its clock (a replay).
 * cli/auditpipe/stack/alerts/webhook.py signs the CLI's POSTs the same way.
 */
public class WebhookSink implements Sink<Alert> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(WebhookSink.class);

    /**
     * The header with the time of sending and the HMAC-SHA256 under the configured secret of the
     * time, a dot and the body: {@code t=<unix seconds>,sha256=<hex>}.
     */
    public static final String SIGNATURE_HEADER = "X-Auditpipe-Signature";

    private final String url;
    private final long timeoutMillis;
    private final int retries;
    private final int queueSize;
    private final String secret;

    public WebhookSink(String url, Duration timeout, int retries, int queueSize) {
        this(url, timeout, retries, queueSize, null);
    }

    /**
     * {@code secret}: the key each POST's body is signed with ({@link #SIGNATURE_HEADER}), or null
     * for none.
     */
    public WebhookSink(String url, Duration timeout, int retries, int queueSize, String secret) {
        this.url = url;
        this.timeoutMillis = timeout.toMillis();
        this.retries = retries;
        this.queueSize = queueSize;
        this.secret = secret;
    }

    /**
     * The header's value for {@code body} sent at {@code epochSeconds} ({@link #SIGNATURE_HEADER}).
     */
    public static String signature(String secret, long epochSeconds, byte[] body) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(
                    new javax.crypto.spec.SecretKeySpec(
                            secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((epochSeconds + ".").getBytes(StandardCharsets.US_ASCII));
            return "t="
                    + epochSeconds
                    + ",sha256="
                    + java.util.HexFormat.of().formatHex(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    @Override
    public SinkWriter<Alert> createWriter(WriterInitContext context) {
        return new Writer(
                context.metricGroup().counter("webhookSent"),
                context.metricGroup().counter("webhookFailed"),
                context.metricGroup().counter("webhookDropped"),
                1000);
    }

    /** The writer with its counters given (tests pass their own) and the first retry delay. */
    Writer writer(Counter sent, Counter failed, Counter dropped, long firstBackoffMillis) {
        return new Writer(sent, failed, dropped, firstBackoffMillis);
    }

    final class Writer implements SinkWriter<Alert> {
        private final BlockingQueue<Alert> queue = new ArrayBlockingQueue<>(queueSize);
        private final Counter sent;
        private final Counter failed;
        private final Counter dropped;
        private final long firstBackoffMillis;
        private final Thread sender;
        private final HttpClient client;
        private volatile boolean running = true;

        Writer(Counter sent, Counter failed, Counter dropped, long firstBackoffMillis) {
            this.sent = sent;
            this.failed = failed;
            this.dropped = dropped;
            this.firstBackoffMillis = firstBackoffMillis;
            client =
                    HttpClient.newBuilder()
                            .connectTimeout(Duration.ofMillis(timeoutMillis))
                            .build();
            sender = new Thread(this::send, "auditpipe-alert-webhook");
            sender.setDaemon(true);
            sender.start();
        }

        @Override
        public void write(Alert alert, Context context) {
            if (!queue.offer(alert)) {
                dropped.inc();
                LOG.warn(
                        "webhook queue full ({} alerts): alert {} not POSTed (it is in the alerts collection and topic)",
                        queueSize,
                        alert.id);
            }
        }

        private void send() {
            while (running) {
                Alert alert;
                try {
                    alert = queue.poll(200, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    return;
                }
                if (alert != null) post(alert);
            }
        }

        private void post(Alert alert) {
            byte[] body = StoreDocuments.alertJson(alert).getBytes(StandardCharsets.UTF_8);
            HttpRequest.Builder builder =
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofMillis(timeoutMillis))
                            .header("Content-Type", "application/json")
                            .header("X-Auditpipe-Alert-Id", alert.id);
            builder.POST(HttpRequest.BodyPublishers.ofByteArray(body));
            long backoff = firstBackoffMillis;
            for (int attempt = 0; attempt <= retries && running; attempt++) {
                if (secret != null) {
                    builder.setHeader(
                            SIGNATURE_HEADER,
                            signature(secret, System.currentTimeMillis() / 1000, body));
                }
                HttpRequest request = builder.build();
                String problem;
                try {
                    HttpResponse<Void> r =
                            client.send(request, HttpResponse.BodyHandlers.discarding());
                    if (r.statusCode() / 100 == 2) {
                        sent.inc();
                        return;
                    }
                    problem = "status " + r.statusCode();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    problem = e.toString();
                }
                if (attempt == retries) {
                    failed.inc();
                    LOG.warn(
                            "webhook POST of alert {} failed {} times, last: {}",
                            alert.id,
                            retries + 1,
                            problem);
                    return;
                }
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException e) {
                    return;
                }
                backoff = Math.min(backoff * 2, 30_000);
            }
        }

        @Override
        public void flush(boolean endOfInput) {
            // never waits for the endpoint: a checkpoint must not depend on it
        }

        @Override
        public void close() {
            running = false;
            sender.interrupt();
        }
    }
}
