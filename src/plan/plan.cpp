#include "model/model_spec.h"
