package io.auditpipe.flink.baselines;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.sink.StoreDocuments;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * schemas/baseline.schema.json is the one definition of a stored baseline: StoreDocuments.baseline
 * is checked against it, and what it writes reads back as the same state.
 */
class BaselineDocumentTest {
    static final Path SCHEMA = Path.of("../../schemas/baseline.schema.json");

    static Profile profile() {
        Profile p = Profile.startingAt("db-01", "dba_bob", 1_000);
        p.lastMillis = 9_000_000;
        p.objects.add("shop.cards");
        p.objects.add("pci_cardholder");
        p.activeDays[10] = 8;
        p.lastActiveDay[10] = 20_400;
        p.hourStart = 7_200_000;
        p.hourRecords = 12;
        p.hours = 30;
        p.mean = 10.5;
        p.m2 = 42.25;
        p.origins.add("10.0.0.1");
        p.originsSeen.add(8_000_000L);
        return p;
    }

    @Test
    void everyFieldIsTheSchemasInItsOrderAndAllAreRequired() throws Exception {
        Document schema = Document.parse(Files.readString(SCHEMA));
        List<String> order = new ArrayList<>(schema.get("properties", Document.class).keySet());
        assertEquals(order, schema.getList("required", String.class));
        assertEquals(order, new ArrayList<>(StoreDocuments.baseline(profile()).keySet()));
    }

    @Test
    void aStoredBaselineReadsBackAsTheSameState() {
        Profile p = profile();
        Profile back =
                StoreDocuments.profileOf(Document.parse(StoreDocuments.baseline(p).toJson()));
        assertEquals(
                List.of(
                        p.server,
                        p.user,
                        p.sinceMillis,
                        p.lastMillis,
                        p.objects,
                        p.hourStart,
                        p.hourRecords,
                        p.hourAlerted,
                        p.hours,
                        p.mean,
                        p.m2,
                        p.origins,
                        p.originsSeen,
                        p.offHoursAlerted),
                List.of(
                        back.server,
                        back.user,
                        back.sinceMillis,
                        back.lastMillis,
                        back.objects,
                        back.hourStart,
                        back.hourRecords,
                        back.hourAlerted,
                        back.hours,
                        back.mean,
                        back.m2,
                        back.origins,
                        back.originsSeen,
                        back.offHoursAlerted));
        assertArrayEquals(p.activeDays, back.activeDays);
        assertArrayEquals(p.lastActiveDay, back.lastActiveDay);
        assertEquals(
                Long.MIN_VALUE,
                StoreDocuments.profileOf(StoreDocuments.baseline(Profile.startingAt("s", "u", 0)))
                        .hourStart);
    }
}
