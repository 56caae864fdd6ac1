/* A Batsim 5 EDC in C, JSON mode, with no batprotocol dependency (docs/batprotocol.md
 * compiles and runs it; tests/edc/test_library_edc.py checks it): FCFS on the lowest-numbered free hosts, the queue's head waits, a job asking for more hosts
 * than the platform has is rejected (the policy of batsim_py/edcs/fcfs.py).
 * It reads the messages by scanning flatbuffers' JSON text and writes its replies by hand.
 * Init data: JSON; "fail_at": N makes take_decisions return 1 at its N-th call (tests). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_LEN 128

static int nb_hosts = 0;
static int *host_owner = NULL;         /* job index running on each host, -1 if free */
static char (*job_ids)[ID_LEN] = NULL; /* every job seen, by index */
static int *job_res = NULL;
static int nb_jobs = 0, cap_jobs = 0;
static int *table = NULL;              /* open-addressing hash: job id -> index + 1 */
static int cap_table = 0;
static int *queue = NULL;              /* job indices waiting, FIFO */
static int queue_head = 0, queue_tail = 0;
static char *out = NULL;
static size_t out_cap = 0, out_len = 0;
static int calls = 0, fail_at = -1;

static void emit(const char *s) {
    size_t n = strlen(s);
    if (out_len + n + 1 > out_cap) {
        out_cap = (out_len + n + 1) * 2;
        out = realloc(out, out_cap);
    }
    memcpy(out + out_len, s, n + 1);
    out_len += n;
}

/* the value after "key": (optional spaces) as a number, searching from p up to end */
static const char *find_key(const char *p, const char *end, const char *key) {
    size_t k = strlen(key);
    for (const char *q = p; q && q + k < end; q++) {
        q = strstr(q, key);
        if (!q || q >= end) return NULL;
        if (q[-1] == '"' && q[k] == '"') {
            q += k + 1;
            while (*q == ' ' || *q == ':') q++;
            return q;
        }
    }
    return NULL;
}

static void copy_string(const char *q, char *dst) {
    int i = 0;
    q++; /* opening quote */
    while (*q && *q != '"' && i < ID_LEN - 1) dst[i++] = *q++;
    dst[i] = 0;
}

static unsigned long hash(const char *s) {
    unsigned long h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

static void table_put(int j) {
    unsigned long i = hash(job_ids[j]) % (unsigned long)cap_table;
    while (table[i]) i = (i + 1) % (unsigned long)cap_table;
    table[i] = j + 1;
}

static int job_index(const char *id) {
    unsigned long i = hash(id) % (unsigned long)cap_table;
    while (table[i]) {
        if (strcmp(job_ids[table[i] - 1], id) == 0) return table[i] - 1;
        i = (i + 1) % (unsigned long)cap_table;
    }
    return -1;
}

static void add_job(const char *id, int res) {
    if (nb_jobs == cap_jobs) {
        cap_jobs = cap_jobs ? cap_jobs * 2 : 1024;
        job_ids = realloc(job_ids, sizeof(*job_ids) * cap_jobs);
        job_res = realloc(job_res, sizeof(int) * cap_jobs);
        queue = realloc(queue, sizeof(int) * cap_jobs);
        free(table);
        cap_table = cap_jobs * 2;
        table = calloc(cap_table, sizeof(int));
        for (int j = 0; j < nb_jobs; j++) table_put(j);
    }
    snprintf(job_ids[nb_jobs], ID_LEN, "%s", id);
    job_res[nb_jobs] = res;
    table_put(nb_jobs);
    queue[queue_tail++] = nb_jobs++;
}

uint8_t batsim_edc_init(const uint8_t *data, uint32_t size, uint32_t *flags,
                        uint8_t **reply, uint32_t *reply_size) {
    char *init = malloc(size + 1);
    memcpy(init, data, size);
    init[size] = 0;
    const char *f = find_key(init, init + size, "fail_at");
    if (f) fail_at = atoi(f);
    free(init);
    *flags = 0x2;
    out_len = 0;
    emit("{\"now\":0.0,\"events\":[{\"timestamp\":0.0,\"event_type\":\"EDCHelloEvent\","
         "\"event\":{\"batprotocol_version\":\"0.1.0\",\"decision_component_name\":"
         "\"c-fcfs\",\"decision_component_version\":\"0.1.0\","
         "\"requested_simulation_features\":{}}}]}");
    *reply = (uint8_t *)out;
    *reply_size = (uint32_t)out_len + 1;
    return 0;
}

uint8_t batsim_edc_take_decisions(const uint8_t *what, uint32_t size, uint8_t **decisions,
                                  uint32_t *decisions_size) {
    const char *msg = (const char *)what;
    const char *end = msg + strlen(msg);
    char now[64], buf[512], id[ID_LEN];
    int first = 1;
    if (++calls == fail_at) return 1;
    const char *n = find_key(msg, end, "now");
    int len = (int)strcspn(n, ",}");
    snprintf(now, sizeof now, "%.*s", len, n);
    out_len = 0;
    snprintf(buf, sizeof buf, "{\"now\":%s,\"events\":[", now);
    emit(buf);
    const char *p = find_key(msg, end, "event_type");
    while (p != NULL) {
        const char *next = find_key(p, end, "event_type");
        const char *stop = next ? next : end;
        if (strncmp(p, "\"SimulationBeginsEvent\"", 23) == 0) {
            nb_hosts = atoi(find_key(p, stop, "computation_host_number"));
            host_owner = malloc(sizeof(int) * (nb_hosts > 0 ? nb_hosts : 1));
            for (int h = 0; h < nb_hosts; h++) host_owner[h] = -1;
        } else if (strncmp(p, "\"JobSubmittedEvent\"", 19) == 0) {
            copy_string(find_key(p, stop, "job_id"), id);
            int res = atoi(find_key(p, stop, "resource_request"));
            if (res > nb_hosts || res <= 0) {
                snprintf(buf, sizeof buf, "%s{\"timestamp\":%s,\"event_type\":\"RejectJobEvent\","
                         "\"event\":{\"job_id\":\"%s\"}}", first ? "" : ",", now, id);
                emit(buf);
                first = 0;
            } else {
                add_job(id, res);
            }
        } else if (strncmp(p, "\"JobCompletedEvent\"", 19) == 0) {
            copy_string(find_key(p, stop, "job_id"), id);
            int j = job_index(id);
            for (int h = 0; h < nb_hosts; h++)
                if (host_owner[h] == j) host_owner[h] = -1;
        }
        p = next;
    }
    while (queue_head < queue_tail) {
        int j = queue[queue_head], nfree = 0;
        for (int h = 0; h < nb_hosts; h++) nfree += host_owner[h] == -1;
        if (job_res[j] > nfree) break;
        queue_head++;
        char alloc[256] = "";
        int taken = 0, h = 0;
        while (taken < job_res[j]) {
            while (host_owner[h] != -1) h++;
            int lo = h;
            while (h < nb_hosts && host_owner[h] == -1 && taken < job_res[j]) {
                host_owner[h++] = j;
                taken++;
            }
            char part[32];
            if (h - 1 == lo) snprintf(part, sizeof part, "%s%d", alloc[0] ? " " : "", lo);
            else snprintf(part, sizeof part, "%s%d-%d", alloc[0] ? " " : "", lo, h - 1);
            strncat(alloc, part, sizeof alloc - strlen(alloc) - 1);
        }
        snprintf(buf, sizeof buf, "%s{\"timestamp\":%s,\"event_type\":\"ExecuteJobEvent\","
                 "\"event\":{\"job_id\":\"%s\",\"allocation\":{\"host_allocation\":\"%s\","
                 "\"executor_placement_type\":\"PredefinedExecutorPlacementStrategyWrapper\","
                 "\"executor_placement\":{\"strategy\":\"SpreadOverHostsFirst\"}}}}",
                 first ? "" : ",", now, job_ids[j], alloc);
        emit(buf);
        first = 0;
    }
    emit("]}");
    *decisions = (uint8_t *)out;
    *decisions_size = (uint32_t)out_len + 1;
    (void)size;
    return 0;
}

uint8_t batsim_edc_deinit(void) {
    free(host_owner);
    free(job_ids);
    free(job_res);
    free(queue);
    free(table);
    free(out);
    host_owner = NULL;
    job_ids = NULL;
    job_res = NULL;
    queue = NULL;
    table = NULL;
    out = NULL;
    out_cap = out_len = 0;
    nb_jobs = cap_jobs = cap_table = queue_head = queue_tail = calls = 0;
    fail_at = -1;
    return 0;
}
