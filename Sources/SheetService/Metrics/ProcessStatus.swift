import Foundation

/// What the kernel says of this process and its host (Linux /proc and cgroup files; elsewhere the
/// figures are absent): the standard process metrics every Prometheus client library exports, and
/// the cores the process may run on.
enum ProcessStatus {
    /// The process metrics in Prometheus's standard names, as exposition text: CPU seconds
    /// (user + system), resident and virtual memory, open and maximum file descriptors, and the
    /// start time (seconds since the epoch). Empty where /proc is not there.
    static func exposition() -> String {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let afterName = stat.range(of: ")", options: .backwards)
        else { return "" }
        // Fields after the command name, which may hold spaces: state is field 3 of proc(5).
        let fields = stat[afterName.upperBound...].split(separator: " ")
        func field(_ n: Int) -> Double { fields.count > n - 3 ? Double(fields[n - 3]) ?? 0 : 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        // utime 14, stime 15 (ticks); starttime 22 (ticks after boot); vsize 23 (bytes); rss 24 (pages).
        let cpuSeconds = (field(14) + field(15)) / ticks
        let startTime = bootTime().map { $0 + field(22) / ticks }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Double) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds)
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", field(24) * pageSize)
        metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23))
        if let open = openFileDescriptors() {
            metric("process_open_fds", "gauge", "Number of open file descriptors.", Double(open))
        }
        metric("process_max_fds", "gauge", "Maximum number of open file descriptors.", Double(limit.rlim_cur))
        if let startTime {
            metric(
                "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                startTime)
        }
        return text
    }

    /// When the host booted, seconds since the epoch (/proc/stat's btime).
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6))
        }
        return nil
    }

    /// The entries of /proc/self/fd, less the one the listing itself holds open.
    private static func openFileDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.first }
            if name != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1
    }

    /// The cores this process may run on: its CPU affinity (what a taskset or a cpuset allows:
    /// sched_getaffinity's mask, which /proc/self/status shows as Cpus_allowed, since Glibc's
    /// Swift module leaves the GNU call out), capped by a cgroup v2 CPU quota rounded up (a
    /// container's `--cpus`).
    static func usableCores() -> Int {
        var cores = ProcessInfo.processInfo.processorCount
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        {
            // A hex mask in 32-bit groups: "ff,ffffffff".
            cores = line.dropFirst(13).reduce(0) { $0 + ($1.hexDigitValue ?? 0).nonzeroBitCount }
        }
        if let quota = cgroupQuota() { cores = min(cores, Int(quota.rounded(.up))) }
        return max(1, cores)
    }

    /// The cgroup v2 CPU quota in cores ("200000 100000" in cpu.max: 2), nil when unlimited: the
    /// cpu.max of the process's own cgroup ("0::/path" in /proc/self/cgroup; "/" in a container).
    private static func cgroupQuota() -> Double? {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
            let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        else { return nil }
        let path = "/sys/fs/cgroup" + (line.dropFirst(3) == "/" ? "" : line.dropFirst(3)) + "/cpu.max"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), period > 0 else {
            return nil
        }
        return quota / period
    }
}
