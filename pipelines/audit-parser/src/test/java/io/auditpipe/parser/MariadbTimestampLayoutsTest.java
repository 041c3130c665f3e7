package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Every {@code server_audit_timestamp_format} of the layout MariadbAuditParser reads (dashes or
 * not, colons or not, a space or T, a fraction of 0-9 digits, an offset or none) gives back the
 * instant it was written from, to the millisecond; without an offset, in the source's time zone.
 */
class MariadbTimestampLayoutsTest {
    @Property(tries = 500)
    void aTimeWrittenInAnyLayoutReadsBack(
            @ForAll @LongRange(min = 0, max = 4_102_444_800_000L) long millis,
            @ForAll boolean dashes,
            @ForAll boolean colons,
            @ForAll boolean t,
            @ForAll @IntRange(min = 0, max = 9) int fractionDigits,
            @ForAll @IntRange(min = -1, max = 2) int offsetStyle,
            @ForAll @IntRange(min = -14, max = 14) int offsetHours) {
        ZoneOffset offset = ZoneOffset.ofHours(offsetHours);
        Instant instant = Instant.ofEpochMilli(millis);
        String pattern =
                (dashes ? "yyyy-MM-dd" : "yyyyMMdd")
                        + (t ? "'T'" : " ")
                        + (colons ? "HH:mm:ss" : "HHmmss")
                        + (fractionDigits > 0 ? "." + "S".repeat(fractionDigits) : "");
        String text = instant.atOffset(offset).format(DateTimeFormatter.ofPattern(pattern));
        ZoneId zone = offset;
        switch (offsetStyle) {
            case 0:
                text += offset.getTotalSeconds() == 0 ? "Z" : offset.getId();
                zone = ZoneId.of("Asia/Tokyo");
                break;
            case 1:
                text += offset.getId().replace(":", "").replace("Z", "+0000");
                zone = ZoneId.of("America/Lima");
                break;
            case 2:
                text += " " + offset.getId().replace("Z", "+00:00");
                zone = ZoneId.of("Europe/Berlin");
                break;
            default:
                break; // no offset: the source's zone is the writer's
        }
        long expected =
                fractionDigits >= 3
                        ? millis
                        : millis - Math.floorMod(millis, (long) Math.pow(10, 3 - fractionDigits));
        assertEquals(expected, MariadbAuditParser.timestampMillis(text, zone), text);
        assertEquals(
                "mariadb-audit",
                AuditFormats.detect((text + ",h,u,localhost,4,0,CONNECT,,,0").getBytes(), false),
                text);
    }
}
