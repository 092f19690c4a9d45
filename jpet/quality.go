package jpet

import "math"

// Quality compares an image with the true activity.
type Quality struct {
	NRMSE float64   // sqrt(sum (c*img - truth)^2 / sum truth^2), c scaling img to the truth's total
	Mean  []float64 // mean of c*img over the pixels each phantom ellipse gives the activity of
	True  []float64 // the ellipses' activities
}

// Compare measures img against the phantom rasterised on s.
func Compare(s Scanner, ph *Phantom, img []float64) Quality {
	s = s.WithDefaults()
	truth := ph.Image(s)
	var st, si float64
	for i := range truth {
		st += truth[i]
		si += img[i]
	}
	c := 0.0
	if si > 0 {
		c = st / si
	}
	q := Quality{Mean: make([]float64, len(ph.Ellipses)), True: make([]float64, len(ph.Ellipses))}
	counts := make([]int, len(ph.Ellipses))
	var num, den float64
	for iy := range s.NY {
		for iz := range s.NZ {
			p := iy*s.NZ + iz
			d := c*img[p] - truth[p]
			num += d * d
			den += truth[p] * truth[p]
			z, y := s.PixelCentre(iz, iy)
			if _, k := ph.Activity(z, y); k >= 0 {
				q.Mean[k] += c * img[p]
				counts[k]++
			}
		}
	}
	q.NRMSE = math.Sqrt(num / den)
	for k := range q.Mean {
		q.True[k] = ph.Ellipses[k].Activity
		if counts[k] > 0 {
			q.Mean[k] /= float64(counts[k])
		} else {
			q.Mean[k] = math.NaN()
		}
	}
	return q
}
