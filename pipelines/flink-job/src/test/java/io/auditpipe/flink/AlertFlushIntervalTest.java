package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.options.JobOptions;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/**
 * The alerts' writers flush a partly filled batch sooner than the others, never later than
 * configured.
 */
class AlertFlushIntervalTest {
    @Test
    void alertsWaitAtMostTheShorterOfTheirsAndTheConfiguredInterval() {
        Configuration shipped = new Configuration();
        assertEquals(Duration.ofMillis(500), shipped.get(JobOptions.SINK_FLUSH_INTERVAL));
        assertEquals(Duration.ofMillis(100), JobWiring.alertFlushInterval(shipped));
        Configuration shorter = new Configuration();
        shorter.set(JobOptions.SINK_FLUSH_INTERVAL, Duration.ofMillis(40));
        assertEquals(Duration.ofMillis(40), JobWiring.alertFlushInterval(shorter));
    }
}
