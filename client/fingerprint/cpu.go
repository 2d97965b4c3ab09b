package fingerprint

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
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

// cpuFingerprinter describes the CPU: cores, model and clock from
// procRoot/cpuinfo, the clock from sysRoot's cpufreq when cpuinfo has
// none. The operator's cpu_total_compute overrides the total.
type cpuFingerprinter struct {
	procRoot, sysRoot string
}

func (f cpuFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	ci := f.read()
	if cfg.CPUTotalCompute > 0 {
		ci.TotalMHz = cfg.CPUTotalCompute
	}
	attrs := node.Attributes
	attrs["cpu.numcores"] = strconv.Itoa(ci.Cores)
	attrs["cpu.totalcompute"] = strconv.FormatInt(ci.TotalMHz, 10)
	attrs["cpu.frequency"] = strconv.Itoa(int(ci.MHz))
	if ci.Model != "" {
		attrs["cpu.modelname"] = ci.Model
	}
	cpu := structs.NodeCpuResources{CpuShares: ci.TotalMHz, TotalCpuCores: uint16(ci.Cores)}
	for i := 0; i < ci.Cores; i++ {
		cpu.ReservableCpuCores = append(cpu.ReservableCpuCores, uint16(i))
	}
	node.NodeResources.Cpu = cpu
	return nil
}

// read reads cpuinfo for the core count, model and clock, falling back
// to cpufreq's max frequency, then to fallbackMHz.
func (f cpuFingerprinter) read() cpuInfo {
	var ci cpuInfo
	var mhzSum float64
	if file, err := os.Open(filepath.Join(f.procRoot, "cpuinfo")); err == nil {
		sc := bufio.NewScanner(file)
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
		file.Close()
	}
	if ci.Cores == 0 {
		ci.Cores = runtime.NumCPU()
	}
	switch {
	case mhzSum > 0:
		ci.TotalMHz = int64(mhzSum)
		ci.MHz = mhzSum / float64(ci.Cores)
	default:
		if b, err := os.ReadFile(filepath.Join(f.sysRoot, "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); err == nil {
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
