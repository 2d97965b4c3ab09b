package fingerprint

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Roots of the files fingerprinters read; tests point them at fixtures.
var (
	procRoot = "/proc"
	sysRoot  = "/sys"
	etcRoot  = "/etc"
)

// fallbackMHz is assumed per core when the CPU reports no frequency (some
// ARM and virtualised machines): better a modest guess than zero capacity.
const fallbackMHz = 1000

type cpuInfo struct {
	Cores      int
	MHz        float64 // per core
	TotalMHz   int64
	Model      string
	GuessedMHz bool
}

// fingerprintCPU reads /proc/cpuinfo for the core count, model and clock,
// falling back to cpufreq's max frequency, then to fallbackMHz.
func fingerprintCPU() cpuInfo {
	var ci cpuInfo
	var mhzSum float64
	if f, err := os.Open(filepath.Join(procRoot, "cpuinfo")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "processor":
				ci.Cores++
			case "model name":
				if ci.Model == "" {
					ci.Model = v
				}
			case "cpu MHz":
				if m, err := strconv.ParseFloat(v, 64); err == nil {
					mhzSum += m
				}
			}
		}
		f.Close()
	}
	if ci.Cores == 0 {
		ci.Cores = runtime.NumCPU()
	}
	switch {
	case mhzSum > 0:
		ci.TotalMHz = int64(mhzSum)
		ci.MHz = mhzSum / float64(ci.Cores)
	default:
		if b, err := os.ReadFile(filepath.Join(sysRoot, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); err == nil {
			if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
				ci.MHz = khz / 1000
			}
		}
		if ci.MHz == 0 {
			ci.MHz, ci.GuessedMHz = fallbackMHz, true
		}
		ci.TotalMHz = int64(ci.MHz * float64(ci.Cores))
	}
	return ci
}
